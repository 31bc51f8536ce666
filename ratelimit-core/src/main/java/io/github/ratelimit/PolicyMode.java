package io.github.ratelimit;

/**
 * Whether a policy rejects what it does not admit.
 *
 * @since 0.2.0
 */
public enum PolicyMode {

	/** Requests over the limit are rejected. */
	ENFORCE,

	/**
	 * Requests are counted and what would have been rejected is reported (a log line at most once per interval,
	 * a listener event, the {@code shadow-rejected} outcome), but nothing is rejected: to measure a new limit on
	 * live traffic before enforcing it.
	 */
	SHADOW

}
