/* The C ABI (ingot.h), compiled as C: depthwise conv1d, silu and gemm on the interpreter (and OpenCL where a device
 * exists) against references, and refusals by status with nothing written. Exits 0 when every check holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ingot.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

enum { B = 2, C = 3, L = 29, K = 3, STRIDE = 2, PAD = 1, DIL = 1, O = (L + 2 * PAD - DIL * (K - 1) - 1) / STRIDE + 1 };

static ingot_tensor tensor3(float* data, int64_t d0, int64_t d1, int64_t d2) {
  ingot_tensor t;
  memset(&t, 0, sizeof t);
  t.device = INGOT_DEVICE_HOST;
  t.data = data;
  t.dtype = INGOT_F32;
  t.rank = 3;
  t.shape[0] = d0;
  t.shape[1] = d1;
  t.shape[2] = d2;
  return t;
}

static ingot_tensor tensor2(float* data, int64_t d0, int64_t d1) {
  ingot_tensor t = tensor3(data, d0, d1, 0);
  t.rank = 2;
  return t;
}

static void run_on(ingot_context* ctx, const char* what) {
  float x[B * C * L], w[C * K], bias[C], y[B * C * O], want[B * C * O];
  int i, b, c, o, k;
  ingot_status st;
  for (i = 0; i < B * C * L; ++i) x[i] = (float)((i * 37) % 11) / 11.0f - 0.5f;
  for (i = 0; i < C * K; ++i) w[i] = (float)((i * 5) % 7) / 7.0f - 0.3f;
  for (i = 0; i < C; ++i) bias[i] = 0.25f * (float)i;
  for (i = 0; i < B * C * O; ++i) y[i] = 999.0f;
  for (b = 0; b < B; ++b)
    for (c = 0; c < C; ++c)
      for (o = 0; o < O; ++o) {
        double acc = bias[c];
        for (k = 0; k < K; ++k) {
          int j = o * STRIDE - PAD + k * DIL;
          if (j >= 0 && j < L) acc += (double)x[(b * C + c) * L + j] * w[c * K + k];
        }
        want[(b * C + c) * O + o] = (float)acc;
      }
  {
    ingot_tensor xt = tensor3(x, B, C, L), wt = tensor2(w, C, K), yt = tensor3(y, B, C, O);
    ingot_tensor bt = tensor3(bias, C, 0, 0);
    bt.rank = 1;
    st = ingot_depthwise_conv1d(ctx, &xt, &wt, &bt, &yt, STRIDE, PAD, DIL);
    if (st != INGOT_OK) fprintf(stderr, "%s: %s: %s\n", what, ingot_status_name(st), ingot_last_error());
    CHECK(st == INGOT_OK);
    for (i = 0; i < B * C * O; ++i) CHECK(fabsf(y[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]));
  }
  /* Refusals: nothing written. */
  for (i = 0; i < B * C * O; ++i) y[i] = 999.0f;
  {
    ingot_tensor xt = tensor3(x, B, C, L), wt = tensor2(w, C, K), yt = tensor3(y, B, C, O);
    int64_t transposed[3] = {C * L, 1, C};
    wt.dtype = INGOT_F16;
    st = ingot_depthwise_conv1d(ctx, &xt, &wt, NULL, &yt, STRIDE, PAD, DIL);
    CHECK(st == INGOT_ERROR_BAD_DTYPE);
    CHECK(strcmp(ingot_last_error_argument(), "w") == 0);
    CHECK(strlen(ingot_last_error()) > 0);
    wt.dtype = INGOT_F32;
    xt.strides = transposed;
    st = ingot_depthwise_conv1d(ctx, &xt, &wt, NULL, &yt, STRIDE, PAD, DIL);
    CHECK(st == INGOT_ERROR_NOT_CONTIGUOUS);
    CHECK(strcmp(ingot_last_error_argument(), "x") == 0);
    xt.strides = NULL;
    yt.shape[2] = O + 1;
    st = ingot_depthwise_conv1d(ctx, &xt, &wt, NULL, &yt, STRIDE, PAD, DIL);
    CHECK(st == INGOT_ERROR_BAD_SHAPE);
    CHECK(strcmp(ingot_last_error_argument(), "y") == 0);
    yt.shape[2] = O;
    st = ingot_depthwise_conv1d(ctx, &xt, &wt, NULL, &yt, 0, PAD, DIL);
    CHECK(st == INGOT_ERROR_BAD_PARAMETER);
    yt.data = x; /* the output over the input */
    yt.shape[2] = O;
    st = ingot_depthwise_conv1d(ctx, &xt, &wt, NULL, &yt, STRIDE, PAD, DIL);
    CHECK(st == INGOT_ERROR_ALIASING);
    CHECK(strcmp(ingot_last_error_argument(), "y") == 0);
  }
  for (i = 0; i < B * C * O; ++i) CHECK(y[i] == 999.0f);
  /* The generic call: silu by name. */
  {
    float sx[41], sy[41];
    ingot_tensor ts[2];
    ingot_param n = {"n", 41};
    for (i = 0; i < 41; ++i) sx[i] = (float)i / 4.0f - 5.0f;
    ts[0] = tensor3(sx, 41, 0, 0);
    ts[0].rank = 1;
    ts[0].name = "x";
    ts[1] = tensor3(sy, 41, 0, 0);
    ts[1].rank = 1;
    ts[1].name = "y";
    st = ingot_call(ctx, "silu", &n, 1, ts, 2);
    CHECK(st == INGOT_OK);
    for (i = 0; i < 41; ++i) {
      double want_y = sx[i] / (1.0 + exp(-(double)sx[i]));
      CHECK(fabs(sy[i] - want_y) <= 1e-5 + 1e-5 * fabs(want_y));
    }
    st = ingot_call(ctx, "no_such_kernel", &n, 1, ts, 2);
    CHECK(st == INGOT_ERROR_UNKNOWN_KERNEL);
  }
  /* gemm: c[5,3] = relu(a[5,4] b_w[3,4]^T + bias[3]) in f32, then refusals (a K mismatch, an unknown flag). */
  {
    enum { GM = 5, GN = 3, GK = 4 };
    float a[GM * GK], w[GN * GK], bias[GN], c[GM * GN];
    ingot_tensor ta, tw, tb, tc;
    int m, n, k;
    for (i = 0; i < GM * GK; ++i) a[i] = (float)(i % 7) / 3.0f - 1.0f;
    for (i = 0; i < GN * GK; ++i) w[i] = (float)(i % 5) / 2.0f - 1.0f;
    for (i = 0; i < GN; ++i) bias[i] = 0.25f * (float)i - 0.5f;
    for (i = 0; i < GM * GN; ++i) c[i] = 999.0f;
    ta = tensor3(a, GM, GK, 0);
    ta.rank = 2;
    tw = tensor3(w, GN, GK, 0);
    tw.rank = 2;
    tb = tensor3(bias, GN, 0, 0);
    tb.rank = 1;
    tc = tensor3(c, GM, GN, 0);
    tc.rank = 2;
    st = ingot_gemm(ctx, &ta, &tw, &tb, &tc, INGOT_GEMM_B_WEIGHT, INGOT_ACT_RELU);
    CHECK(st == INGOT_OK);
    for (m = 0; m < GM; ++m) {
      for (n = 0; n < GN; ++n) {
        double want = bias[n];
        for (k = 0; k < GK; ++k) want += (double)a[m * GK + k] * w[n * GK + k];
        want = want > 0 ? want : 0;
        CHECK(fabs(c[m * GN + n] - want) <= 1e-5 + 1e-5 * fabs(want));
      }
    }
    for (i = 0; i < GM * GN; ++i) c[i] = 999.0f;
    tw.shape[1] = GK - 1; /* w [3, 3]: its K disagrees with a's */
    st = ingot_gemm(ctx, &ta, &tw, NULL, &tc, INGOT_GEMM_B_WEIGHT, INGOT_ACT_NONE);
    CHECK(st == INGOT_ERROR_BAD_SHAPE);
    CHECK(strcmp(ingot_last_error_argument(), "b") == 0);
    tw.shape[1] = GK;
    st = ingot_gemm(ctx, &ta, &tw, NULL, &tc, 64u, INGOT_ACT_NONE);
    CHECK(st == INGOT_ERROR_BAD_PARAMETER);
    CHECK(strcmp(ingot_last_error_argument(), "flags") == 0);
    for (i = 0; i < GM * GN; ++i) CHECK(c[i] == 999.0f);
  }
  printf("%s: C ABI checks done\n", what);
}

int main(void) {
  ingot_context* ctx = NULL;
  ingot_status st = ingot_context_create_interpreter(&ctx);
  CHECK(st == INGOT_OK && ctx != NULL);
  if (ctx) run_on(ctx, "interp");
  ingot_context_destroy(ctx);
  ctx = NULL;
  st = ingot_context_create_opencl(NULL, &ctx);
  if (st == INGOT_OK) {
    run_on(ctx, "opencl");
    ingot_context_destroy(ctx);
  } else {
    CHECK(st == INGOT_ERROR_UNAVAILABLE && ctx == NULL);
    printf("opencl skipped: %s\n", ingot_last_error());
  }
  st = ingot_context_create_opencl("no device has this name", &ctx);
  CHECK(st == INGOT_ERROR_UNAVAILABLE && ctx == NULL);
  printf("%d failed checks\n", failures);
  return failures == 0 ? 0 : 1;
}
