package io.github.ratelimit.engine;

/**
 * Thrown at start-up when a {@code @RateLimited} policy or its configuration is invalid. The message names the
 * method ({@code Class#method(parameters)}) or the property, the attribute and the bad value.
 *
 * @since 0.1.0
 */
public class InvalidRateLimitPolicyException extends RuntimeException {

	private final String policyName;

	/**
	 * Create a new exception.
	 * @param policyName the policy concerned
	 * @param message the message
	 * @param cause the cause, may be {@code null}
	 */
	public InvalidRateLimitPolicyException(String policyName, String message, Throwable cause) {
		super(message, cause);
		this.policyName = policyName;
	}

	/**
	 * Create a new exception.
	 * @param policyName the policy concerned
	 * @param message the message
	 */
	public InvalidRateLimitPolicyException(String policyName, String message) {
		super(message);
		this.policyName = policyName;
	}

	/**
	 * Return the name of the policy concerned.
	 * @return the policy name
	 */
	public String getPolicyName() {
		return this.policyName;
	}

}
