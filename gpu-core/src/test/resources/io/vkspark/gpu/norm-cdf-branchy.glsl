// vk_norm_cdf as vkmath.glsl wrote it until 2026-12-03: erfc's regions as branches. NormCdfBitsTest
// checks that the branch-free form gives the same bits.
// Standard normal CDF, Phi(x) = erfc(-x/sqrt(2))/2. For x < -1.25 sqrt(2) it is evaluated as
// exp(-x^2/2) * g(x) with x^2 exact, so it is accurate relative to Phi(x) down to the underflow
// threshold (x ~ -38.5); 1 - Phi(x) is not returned separately (use vk_norm_cdf(-x)).
double ref_norm_cdf(double x) {
  if (vkm_isnan(x)) return x;
  precise double z = x * VKM_INV_SQRT2_H;
  if (z > -1.25LF) {
    precise double r = 0.5LF * erfc(-z);
    if (z < -0.25LF) {
      // z is x/sqrt(2) rounded; add Phi'(x) times the rounding error, which matters in the left tail
      dvec2 zx = vkm_two_prod(x, VKM_INV_SQRT2_H);
      precise double dz = (zx.x - z) + (zx.y + x * VKM_INV_SQRT2_L);
      precise double g = exp(-z * z) * VKM_INV_SQRTPI_H;
      r = r + dz * g;
    }
    return r;
  }
  precise double t = -x;
  if (t > 39.5LF) return 0.0LF;
  dvec2 tt = vkm_two_prod(t, t);
  precise double m = VKM_INV_SQRT2_H / t;        // 1/(2 z) = 1/(sqrt(2) t)
  return vkm_erfc_scaled(-z, 0.5LF * tt.x, 0.5LF * tt.y, m);
}

