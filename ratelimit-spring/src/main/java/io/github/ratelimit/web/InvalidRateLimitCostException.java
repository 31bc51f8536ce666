package io.github.ratelimit.web;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * Thrown when a {@code cost} expression does not yield a whole number of at least 1 for a request (typically from
 * request data); rendered as {@code 400 Bad Request}. Nothing is counted.
 *
 * @since 0.1.0
 */
public class InvalidRateLimitCostException extends ErrorResponseException {

	private final String policyName;

	/**
	 * Create a new exception.
	 * @param policyName the policy
	 * @param value what the cost expression yielded, or why it failed
	 */
	public InvalidRateLimitCostException(String policyName, String value) {
		super(HttpStatus.BAD_REQUEST, problem(policyName, value), null);
		this.policyName = policyName;
	}

	private static ProblemDetail problem(String policyName, String value) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
				"Invalid request cost for rate limit policy '" + policyName + "': " + value);
		problem.setProperty("policy", policyName);
		return problem;
	}

	/**
	 * Return the policy.
	 * @return the policy name
	 */
	public String getPolicyName() {
		return this.policyName;
	}

}
