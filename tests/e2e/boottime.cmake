# SPDX-License-Identifier: Apache-2.0
# Boot-time marks and the first-KVM_RUN figure of --stats in a real guest
# (boottime-test.sh).
e2e_add(e2e.boottime.marks auto ${E2E_DIR}/boottime-test.sh
	--microvm ${E2E_MICROVM} --artifacts ${E2E_ARTIFACTS})
