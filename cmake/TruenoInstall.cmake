# `cmake --install`: headers, the libraries, the `realizar` CLI, a CMake package (find_package(trueno):
# trueno::trueno, realizar::realizar) and pkg-config files (trueno.pc, realizar.pc).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The same names inside this build (add_subdirectory users).
add_library(trueno::trueno ALIAS trueno)
add_library(realizar::realizar ALIAS realizar)

# trueno's export set holds trueno and the libraries of this project it links (static archives must be
# installed with it).
set(trueno_export_targets trueno)
get_target_property(trueno_links trueno LINK_LIBRARIES)
foreach(lib IN LISTS trueno_links)
  if(TARGET "${lib}")
    get_target_property(imported ${lib} IMPORTED)
    if(NOT imported)
      list(APPEND trueno_export_targets ${lib})
    endif()
  endif()
endforeach()

set(trueno_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/trueno)
install(TARGETS ${trueno_export_targets} EXPORT trueno-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS realizar EXPORT realizar-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS realizar_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/trueno ${PROJECT_SOURCE_DIR}/realizar/include/realizar
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# A built device backend's public headers (src/<folder>/include/trueno/<folder>, Note [Backend list]).
get_property(built_backends GLOBAL PROPERTY TRUENO_BUILT_DEVICE_BACKENDS)
foreach(entry IN LISTS built_backends)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 1 folder)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/src/${folder}/include/trueno)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/${folder}/include/trueno DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
# realizar/parity.h includes the gate's numbers generated from contracts/gpu-parity.yaml.
install(FILES ${PROJECT_BINARY_DIR}/realizar/generated/realizar/gate_contract.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/realizar)
install(EXPORT trueno-targets NAMESPACE trueno:: DESTINATION ${trueno_cmake_dir})
install(EXPORT realizar-targets NAMESPACE realizar:: DESTINATION ${trueno_cmake_dir})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/trueno-config.cmake.in
  ${PROJECT_BINARY_DIR}/trueno-config.cmake INSTALL_DESTINATION ${trueno_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/trueno-config-version.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor release may break the API
install(FILES ${PROJECT_BINARY_DIR}/trueno-config.cmake ${PROJECT_BINARY_DIR}/trueno-config-version.cmake
  DESTINATION ${trueno_cmake_dir})

# pkg-config: relocatable (prefix relative to the .pc file). Static libraries (the default) list their
# dependencies as public ones: a plain `pkg-config --libs realizar` links.
file(RELATIVE_PATH pc_prefix /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" pc_prefix "\${pcfiledir}/${pc_prefix}")
set(pc_trueno_deps "-pthread")
foreach(lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND pc_trueno_deps " -l${lib}")
endforeach()
set(pc_realizar_deps "libpcre2-8")
if(BUILD_SHARED_LIBS)
  set(pc_trueno_libs_private "${pc_trueno_deps}")
  set(pc_realizar_requires_private "${pc_realizar_deps}")
else()
  set(pc_trueno_libs "${pc_trueno_deps}")
  set(pc_realizar_requires ", ${pc_realizar_deps}")
endif()
foreach(pc IN ITEMS trueno realizar)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
