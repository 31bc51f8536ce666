package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * One policy that applied to a request, with its decision.
 *
 * @param policy the policy
 * @param decision its decision for the request
 * @since 0.1.0
 */
public record AppliedRateLimit(RateLimitPolicy policy, Decision decision) {
}
