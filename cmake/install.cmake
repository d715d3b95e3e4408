# `cmake --install`: the public headers, the static libraries of the layers, the CLI, and a CMake package
# (ingotConfig.cmake, its version file and the exported targets) so that another project finds ingot with
# find_package(ingot CONFIG REQUIRED) and links ingot::ingot. Installed files name no path of this build: the
# exported targets are relative to the prefix they are installed under.
include(CMakePackageConfigHelpers)

set(INGOT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ingot)

# Exported names: ingot::core, ingot::runtime, ingot::library, ingot::harness, ingot::api and ingot::ingot (all of
# them).
foreach(layer core runtime library harness api)
  set_target_properties(ingot_${layer} PROPERTIES EXPORT_NAME ${layer})
endforeach()
set_target_properties(ingot PROPERTIES EXPORT_NAME ingot)

install(TARGETS ingot_core ingot_runtime ingot_library ingot_harness ingot_api ingot
        EXPORT ingotTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ingot-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every public header (include/ingot, ops.def included, and the C ABI include/ingot.h). The kernels' own headers (kernels/, blocks/) are not
# public: no header under include/ includes them.
install(DIRECTORY include/ingot DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/ingot.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT ingotTargets NAMESPACE ingot:: DESTINATION ${INGOT_INSTALL_CMAKEDIR})

if(INGOT_WITH_OPENCL AND OpenCL_FOUND)
  set(INGOT_PACKAGE_HAS_OPENCL TRUE)
else()
  set(INGOT_PACKAGE_HAS_OPENCL FALSE)
endif()
configure_package_config_file(cmake/ingotConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/ingotConfig.cmake
                              INSTALL_DESTINATION ${INGOT_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ingotConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ingotConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/ingotConfigVersion.cmake
        DESTINATION ${INGOT_INSTALL_CMAKEDIR})
