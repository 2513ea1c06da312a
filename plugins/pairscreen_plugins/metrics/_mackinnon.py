"""MacKinnon's (1994) response-surface coefficients for unit-root and cointegration p-values.

Only the regression with a constant ("c"), for N = 1 to 6 series believed to be I(1): N = 1 is
the augmented Dickey-Fuller test of one series, N = 2 the Engle-Granger test of two. The
values are those of MacKinnon (1994), "Approximate asymptotic distribution functions for
unit-root and cointegration tests", JBES 12(2), tables 3 and 4, with the large-p coefficients
already multiplied by their published scale factors (1, 1, 1e-1, 1e-2). They live here as
numbers so that a p-value costs no import of statsmodels (which pulls in pandas and
scipy.stats); a test checks them against ``statsmodels.tsa.adfvalues`` value for value.
"""

from __future__ import annotations

# Row N - 1: polynomial coefficients (lowest order first) of the inverse-normal p-value
# for statistics at or below TAU_STAR_C (small p) and above it (large p).
TAU_C_SMALLP: tuple[tuple[float, ...], ...] = (
    (2.1659, 1.4412, 0.038269000000000004),
    (2.92, 1.5012, 0.039796),
    (3.4699, 1.4856, 0.03164),
    (3.9673, 1.4777, 0.026315),
    (4.5509, 1.5338, 0.029545),
    (5.1399, 1.6036, 0.034445),
)
TAU_C_LARGEP: tuple[tuple[float, ...], ...] = (
    (1.7339, 0.9320200000000001, -0.12745, -0.010368),
    (2.1945, 0.64695, -0.29198, -0.042377000000000005),
    (2.5893, 0.45168, -0.36529, -0.050074),
    (3.0387, 0.45452000000000004, -0.33666, -0.041921),
    (3.5049, 0.5209800000000001, -0.29158, -0.033468),
    (3.9489, 0.58933, -0.25359, -0.02721),
)
# The cut-off between the two polynomials, and the statistics above (below) which the
# p-value is 1 (0).
TAU_STAR_C: tuple[float, ...] = (-1.61, -2.62, -3.13, -3.47, -3.78, -3.93)
TAU_MAX_C: tuple[float, ...] = (2.74, 0.92, 0.55, 0.61, 0.79, 1.0)
TAU_MIN_C: tuple[float, ...] = (-18.83, -18.86, -23.48, -28.07, -25.96, -23.27)
