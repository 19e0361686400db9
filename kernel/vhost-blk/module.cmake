# SPDX-License-Identifier: Apache-2.0
# The vhost-blk kernel module (kernel/vhost-blk/README.md): the target
# vhost-blk-module runs build.sh for KERNEL_VERSION and leaves
# ${CMAKE_BINARY_DIR}/kernel/vhost-blk/vhost_blk.ko. Not part of `all`:
# it needs Debian's linux-headers-KERNEL_VERSION and linux-source of the
# same version; without them the target fails saying what to install and
# the rest of the tree builds as before.
set(VHOST_BLK_SRC ${CMAKE_CURRENT_LIST_DIR})
set(VHOST_BLK_OUT ${CMAKE_BINARY_DIR}/kernel/vhost-blk)
set(VHOST_BLK_KO ${VHOST_BLK_OUT}/vhost_blk.ko)

# Default: the nested harness's L1 kernel when its headers are installed
# (that is where the module is tested), else the running kernel.
execute_process(COMMAND ${VHOST_BLK_SRC}/harness-kernel.sh
	${CMAKE_BINARY_DIR}/e2e-artifacts
	OUTPUT_VARIABLE VHOST_BLK_HARNESS_KVER
	OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND uname -r OUTPUT_VARIABLE VHOST_BLK_UNAME_R
	OUTPUT_STRIP_TRAILING_WHITESPACE)
if(VHOST_BLK_HARNESS_KVER AND
   EXISTS /usr/src/linux-headers-${VHOST_BLK_HARNESS_KVER}/Makefile)
	set(VHOST_BLK_DEFAULT_KVER ${VHOST_BLK_HARNESS_KVER})
else()
	set(VHOST_BLK_DEFAULT_KVER ${VHOST_BLK_UNAME_R})
endif()
set(KERNEL_VERSION ${VHOST_BLK_DEFAULT_KVER} CACHE STRING
	"kernel the vhost-blk module is built for (vhost-blk-module)")

add_custom_target(vhost-blk-module
	COMMAND ${VHOST_BLK_SRC}/build.sh ${KERNEL_VERSION} ${VHOST_BLK_OUT}
	BYPRODUCTS ${VHOST_BLK_KO}
	COMMENT "vhost-blk module for ${KERNEL_VERSION} (kernel/vhost-blk/build.sh)"
	USES_TERMINAL VERBATIM)
