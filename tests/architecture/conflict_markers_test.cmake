# Fails when a file of the source tree holds a merge's conflict markers (a line that begins with
# "<<<<<<< " or ">>>>>>> "), naming each file and line: docs and code that went out half-merged.
# The files are git's (tracked and untracked, ignored ones left out) when SOURCE is a git checkout,
# else every file under SOURCE but build trees. First it checks itself on a planted file.
#   cmake -DSOURCE=<repository root> -DWORK=<scratch dir> -P conflict_markers_test.cmake

function(find_markers root files out)
  set(found "")
  foreach(file IN LISTS files)
    if(IS_DIRECTORY "${root}/${file}" OR NOT EXISTS "${root}/${file}")
      continue()
    endif()
    file(STRINGS "${root}/${file}" lines REGEX "^(<<<<<<<|>>>>>>>) ")
    foreach(line IN LISTS lines)
      list(APPEND found "${file}: ${line}")
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The check finds a planted marker (so that an empty finding below means something).
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/planted.md" "text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n")
find_markers("${WORK}" "planted.md" planted)
list(LENGTH planted n_planted)
if(NOT n_planted EQUAL 2)
  message(FATAL_ERROR "the check missed the markers planted in ${WORK}/planted.md: ${planted}")
endif()

find_program(GIT git)
set(files "")
if(GIT AND EXISTS "${SOURCE}/.git")
  execute_process(COMMAND "${GIT}" ls-files --cached --others --exclude-standard
                  WORKING_DIRECTORY "${SOURCE}" OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    string(STRIP "${listing}" listing)
    string(REPLACE "\n" ";" files "${listing}")
  endif()
endif()
if(NOT files)
  file(GLOB_RECURSE files RELATIVE "${SOURCE}" "${SOURCE}/*")
  list(FILTER files EXCLUDE REGEX "^(build[^/]*|\\.git)/")
endif()
find_markers("${SOURCE}" "${files}" found)
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "merge conflict markers left in the sources:\n  ${text}\n"
                      "resolve the conflicts (keep what both sides meant) and remove the markers")
endif()
list(LENGTH files n)
message(STATUS "no conflict markers in ${n} files")
