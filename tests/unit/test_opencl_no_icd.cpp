// OpenCL with no ICD registered: create() must refuse with BackendUnavailable ("opencl not
// available: ..."), never crash. The ICD loader reads OCL_ICD_VENDORS once per process, at the
// first OpenCL call, so this lives in its own executable that makes no other OpenCL call; ctest
// sets the variable (ENVIRONMENT property) and the test sets it too when run by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ingot/runtime/opencl.hpp"

using namespace ingot::runtime;

TEST(OpenCLNoIcd, CreateReportsNoPlatform) {
  std::filesystem::path empty;
  const char* set = std::getenv("OCL_ICD_VENDORS");
  if (set && *set && std::filesystem::is_directory(set) && std::filesystem::is_empty(set)) {
    empty = set;
  } else {
    empty = std::filesystem::temp_directory_path() / ("ingot-empty-icd-" + std::to_string(::getpid()));
    std::filesystem::create_directories(empty);
    ::setenv("OCL_ICD_VENDORS", empty.c_str(), 1);
  }
  ::unsetenv("OCL_ICD_FILENAMES");  // would add ICDs beside the vendors directory
  try {
    (void)OpenCLBackend::create();
    FAIL() << "create() succeeded although OCL_ICD_VENDORS=" << empty << " lists no ICD";
  } catch (const BackendUnavailable& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("opencl not available: ", 0), 0u) << msg;
#if defined(INGOT_HAVE_OPENCL) && INGOT_HAVE_OPENCL
    EXPECT_NE(msg.find("clGetPlatformIDs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("CL_"), std::string::npos) << "the OpenCL error name is missing: " << msg;
#else
    EXPECT_NE(msg.find("built without OpenCL headers"), std::string::npos) << msg;
#endif
  }
}
