package io.github.ratelimit.web;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * A request refused by a rate limit policy, rendered as an RFC 9457 problem with the members {@code policy} and
 * {@code retryAfter} (seconds). Thrown on the hot path, so it carries no stack trace; its message names the policy,
 * never the key (keys can be personal data).
 *
 * @since 0.1.0
 */
public abstract class RateLimitException extends ErrorResponseException {

	private final RateLimitPolicy policy;

	private final Decision decision;

	/**
	 * Create a new exception.
	 * @param status the response status
	 * @param detail the problem detail, which may use the retry delay
	 * @param policy the policy that refused the request
	 * @param decision the decision
	 */
	protected RateLimitException(HttpStatus status, String detail, RateLimitPolicy policy, Decision decision) {
		super(status, problem(status, detail, policy, decision), null);
		this.policy = policy;
		this.decision = decision;
	}

	private static ProblemDetail problem(HttpStatus status, String detail, RateLimitPolicy policy, Decision decision) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setProperty("policy", policy.name());
		long retryAfter = AppliedRateLimit.retryAfterSeconds(policy, decision);
		if (retryAfter > 0) {
			problem.setProperty("retryAfter", retryAfter); // none for a concurrency limit: nothing says when
		}
		return problem;
	}

	/**
	 * Return the policy that refused the request.
	 * @return the policy
	 */
	public RateLimitPolicy getPolicy() {
		return this.policy;
	}

	/**
	 * Return the decision.
	 * @return the decision
	 */
	public Decision getDecision() {
		return this.decision;
	}

	/**
	 * Return the seconds the client is told to wait before retrying: the response's {@code Retry-After} and the
	 * problem's {@code retryAfter}; 0 when nothing says (a concurrency limit's rejection), and neither is sent.
	 * @return the seconds, at least 1, or 0
	 * @since 0.2.0
	 */
	public long getRetryAfterSeconds() {
		return AppliedRateLimit.retryAfterSeconds(this.policy, this.decision);
	}

	/**
	 * Give the response headers a {@code Retry-After} if the headers writer did not: an application's own writer may
	 * leave it out, and every 429 and 503 must still say when to come back.
	 * @param headers the response's headers, not yet sent
	 * @since 0.2.0
	 */
	public void applyRetryAfter(HttpHeaders headers) {
		if (!headers.containsHeader(HttpHeaders.RETRY_AFTER) && getRetryAfterSeconds() > 0) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(getRetryAfterSeconds()));
		}
	}

	@Override
	public synchronized Throwable fillInStackTrace() {
		return this; // thrown for every refused request; the stack says nothing useful
	}

}
