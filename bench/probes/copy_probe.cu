// bench/probes/copy_probe.cu — how fast can a copy of a given size go on this GPU, and which load/store
// policy gets there? A calibration probe for issue 7's bar (a fraction of the 1 GiB copy ceiling), not part
// of the library: the library's kernels come from the DSL. Build: nvcc -O3 -arch=sm_90 copy_probe.cu.
// Prints, per size and method, the median of 30 event-timed launches after 5 warm-ups, rotating over
// enough buffer sets to exceed twice the L2, in TB/s of bytes read + written.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

__global__ void copy_plain(const uint4* __restrict__ s, uint4* __restrict__ d, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) d[i] = s[i];
}
__global__ void copy_cs(const uint4* __restrict__ s, uint4* __restrict__ d, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) __stcs(d + i, __ldcs(s + i));
}
__global__ void copy_st_cs(const uint4* __restrict__ s, uint4* __restrict__ d, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) __stcs(d + i, s[i]);
}
// Each thread copies U vectors (strided by the grid's threads within a block-sized chunk).
template <int U>
__global__ void copy_unroll(const uint4* __restrict__ s, uint4* __restrict__ d, size_t n) {
  size_t base = blockIdx.x * (size_t)blockDim.x * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    size_t i = base + (size_t)u * blockDim.x;
    if (i < n) v[u] = s[i];
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    size_t i = base + (size_t)u * blockDim.x;
    if (i < n) d[i] = v[u];
  }
}
__global__ void copy_gridstride(const uint4* __restrict__ s, uint4* __restrict__ d, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) d[i] = s[i];
}

int main(int argc, char** argv) {
  int dev = 0, sms = 0;
  CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  std::vector<double> sizes = {154.1e6, 231.0e6, 1073741824.0 * 2};  // bytes read + written
  if (argc > 1) sizes = {std::atof(argv[1])};
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::printf("%-26s %12s %10s %8s\n", "method", "bytes", "median us", "TB/s");
  for (double total : sizes) {
    const size_t half = static_cast<size_t>(total / 2) / 16 * 16, n = half / 16;
    const int sets = std::max<int>(1, static_cast<int>((2.0 * l2) / half) + 1);
    std::vector<uint4*> src(sets), dst(sets);
    for (int k = 0; k < sets; ++k) {
      CK(cudaMalloc(&src[k], half));
      CK(cudaMalloc(&dst[k], half));
      CK(cudaMemset(src[k], 0x3c, half));
    }
    auto run = [&](const char* name, auto launch) {
      std::vector<float> t;
      for (int r = 0; r < 35; ++r) {
        const int k = r % sets;
        CK(cudaEventRecord(a));
        launch(src[k], dst[k]);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 5) t.push_back(ms);
      }
      CK(cudaGetLastError());
      std::sort(t.begin(), t.end());
      const double med = t[t.size() / 2] * 1e-3;
      std::printf("%-26s %12.0f %10.2f %8.3f\n", name, 2.0 * half, med * 1e6, 2.0 * half / med / 1e12);
    };
    const unsigned g256 = static_cast<unsigned>((n + 255) / 256);
    run("driver memcpy d2d", [&](uint4* s, uint4* d) { CK(cudaMemcpyAsync(d, s, half, cudaMemcpyDeviceToDevice)); });
    run("16B/thread (ingot-like)", [&](uint4* s, uint4* d) { copy_plain<<<g256, 256>>>(s, d, n); });
    run("16B/thread st.cs", [&](uint4* s, uint4* d) { copy_st_cs<<<g256, 256>>>(s, d, n); });
    run("16B/thread ld.cs st.cs", [&](uint4* s, uint4* d) { copy_cs<<<g256, 256>>>(s, d, n); });
    run("16B/thread x2", [&](uint4* s, uint4* d) { copy_unroll<2><<<(n + 511) / 512, 256>>>(s, d, n); });
    run("16B/thread x4", [&](uint4* s, uint4* d) { copy_unroll<4><<<(n + 1023) / 1024, 256>>>(s, d, n); });
    run("16B/thread x8", [&](uint4* s, uint4* d) { copy_unroll<8><<<(n + 2047) / 2048, 256>>>(s, d, n); });
    run("grid-stride 8 blk/SM", [&](uint4* s, uint4* d) { copy_gridstride<<<sms * 8, 256>>>(s, d, n); });
    run("grid-stride 4 blk/SM 1024", [&](uint4* s, uint4* d) { copy_gridstride<<<sms * 2, 1024>>>(s, d, n); });
    for (int k = 0; k < sets; ++k) {
      CK(cudaFree(src[k]));
      CK(cudaFree(dst[k]));
    }
  }
  return 0;
}
