# SPDX-License-Identifier: Apache-2.0
# The command line's documentation, made from its one source docs/cli.txt
# by docs/cli-doc.sh: gen/cli_usage.inc (the --help text cli.c includes),
# gen/microvm.1 (the man page) and gen/microvm.bash-completion. README.md's
# Usage tables come from the same source (`docs/cli-doc.sh update`); test
# docs.cli checks that all of them agree (tests/docs/cli-doc-test.sh).
find_program(MICROVM_AWK NAMES mawk gawk awk REQUIRED)
set(MICROVM_CLI_DOC ${PROJECT_SOURCE_DIR}/docs/cli-doc.sh)
set(MICROVM_CLI_DOC_DEPS ${PROJECT_SOURCE_DIR}/docs/cli.txt
	${PROJECT_SOURCE_DIR}/docs/cli-doc.awk ${MICROVM_CLI_DOC}
	${PROJECT_SOURCE_DIR}/src/vmm/config.h
	${PROJECT_SOURCE_DIR}/src/api/fc_config.h
	${MICROVM_GEN_DIR}/microvm_version.h)
set(MICROVM_CLI_DOC_OUT)
foreach(pair "help-c;cli_usage.inc" "man;microvm.1"
		"completion;microvm.bash-completion")
	list(GET pair 0 mode)
	list(GET pair 1 out)
	add_custom_command(OUTPUT ${MICROVM_GEN_DIR}/${out}
		COMMAND ${CMAKE_COMMAND} -E env AWK=${MICROVM_AWK}
			sh ${MICROVM_CLI_DOC} ${mode}
			${MICROVM_GEN_DIR}/microvm_version.h
			> ${MICROVM_GEN_DIR}/${out}.tmp
		COMMAND ${CMAKE_COMMAND} -E rename ${MICROVM_GEN_DIR}/${out}.tmp
			${MICROVM_GEN_DIR}/${out}
		DEPENDS ${MICROVM_CLI_DOC_DEPS}
		COMMENT "Generating ${out} from docs/cli.txt")
	list(APPEND MICROVM_CLI_DOC_OUT ${MICROVM_GEN_DIR}/${out})
endforeach()
add_custom_target(cli_doc ALL DEPENDS ${MICROVM_CLI_DOC_OUT})
add_dependencies(microvm_core cli_doc)
add_dependencies(microvm_revision cli_doc)
