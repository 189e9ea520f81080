"""The limits the seeds fix (SPEC section 14), each with its meaning."""

REMEMBER_MAX_BODY_BYTES = 1024 * 1024
QUERY_MAX_BODY_BYTES = 64 * 1024
