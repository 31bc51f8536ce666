package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * Thrown when the rate limit store cannot decide and the policy fails closed
 * ({@link io.github.ratelimit.FailureMode#DENY}); rendered as {@code 503 Service Unavailable} with
 * {@code Retry-After} and an RFC 9457 problem body.
 *
 * @since 0.1.0
 */
public class RateLimitUnavailableException extends ErrorResponseException {

	private final RateLimitPolicy policy;

	private final Decision decision;

	/**
	 * Create a new exception.
	 * @param policy the policy whose store failed
	 * @param decision the decision of the failure mode
	 */
	public RateLimitUnavailableException(RateLimitPolicy policy, Decision decision) {
		super(HttpStatus.SERVICE_UNAVAILABLE, problem(policy, decision), null);
		this.policy = policy;
		this.decision = decision;
	}

	private static ProblemDetail problem(RateLimitPolicy policy, Decision decision) {
		long retryAfter = decision.retryAfterSeconds();
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
				"Rate limiting for policy '" + policy.name() + "' is temporarily unavailable. Retry after "
						+ retryAfter + " seconds.");
		problem.setProperty("policy", policy.name());
		problem.setProperty("retryAfter", retryAfter);
		return problem;
	}

	/**
	 * Return the policy whose store failed.
	 * @return the policy
	 */
	public RateLimitPolicy getPolicy() {
		return this.policy;
	}

	/**
	 * Return the decision of the failure mode.
	 * @return the decision
	 */
	public Decision getDecision() {
		return this.decision;
	}

	@Override
	public String getMessage() {
		return "Rate limit store unavailable for policy '" + this.policy.name() + "'";
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this;
	}

}
