package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * Thrown when a request exceeds a rate limit; rendered as {@code 429 Too Many Requests} with an RFC 9457 problem
 * body whose members {@code policy} and {@code retryAfter} (seconds) say which limit and how long to wait. The
 * message names the policy, never the key (keys can be personal data).
 *
 * @since 0.1.0
 */
public class RateLimitExceededException extends ErrorResponseException {

	private final RateLimitPolicy policy;

	private final Decision decision;

	/**
	 * Create a new exception.
	 * @param policy the policy that rejected the request
	 * @param decision the rejection
	 */
	public RateLimitExceededException(RateLimitPolicy policy, Decision decision) {
		super(HttpStatus.TOO_MANY_REQUESTS, problem(policy, decision), null);
		this.policy = policy;
		this.decision = decision;
	}

	private static ProblemDetail problem(RateLimitPolicy policy, Decision decision) {
		long retryAfter = decision.retryAfterSeconds();
		String detail = decision.exceedsCapacity()
				? "Request exceeds the capacity of rate limit policy '" + policy.name() + "' and can never pass."
				: "Rate limit of policy '" + policy.name() + "' exceeded. Retry after " + retryAfter + " seconds.";
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, detail);
		problem.setProperty("policy", policy.name());
		problem.setProperty("retryAfter", retryAfter);
		return problem;
	}

	/**
	 * Return the policy that rejected the request.
	 * @return the policy
	 */
	public RateLimitPolicy getPolicy() {
		return this.policy;
	}

	/**
	 * Return the rejection.
	 * @return the decision
	 */
	public Decision getDecision() {
		return this.decision;
	}

	@Override
	public String getMessage() {
		return "Rate limit of policy '" + this.policy.name() + "' exceeded";
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this; // thrown on the hot path for every rejection; the stack says nothing useful
	}

}
