package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import org.jspecify.annotations.Nullable;

/**
 * Configured values for a policy that take precedence over its annotation; {@code null} means "use the
 * annotation's value".
 *
 * @param limit the limit
 * @param window the window
 * @param algorithm the algorithm
 * @param burst the burst
 * @param enabled whether the policy applies at all
 * @param failureMode what happens when the store cannot decide
 * @param key the key expression (a shared policy's, defined only in configuration)
 * @param countOn the status codes or classes that count
 * @param skip the condition under which the policy does not apply
 * @param mode whether the policy rejects
 * @since 0.1.0
 */
public record PolicyOverride(@Nullable Long limit, @Nullable Duration window, @Nullable Algorithm algorithm,
		@Nullable Long burst, @Nullable Boolean enabled, @Nullable FailureMode failureMode, @Nullable String key,
		@Nullable List<String> countOn, @Nullable String skip, @Nullable PolicyMode mode) {

	/** No override at all. */
	public static final PolicyOverride NONE = new PolicyOverride(null, null, null, null, null, null, null, null, null,
			null);

	/**
	 * Create an override of the counting values only.
	 * @param limit the limit
	 * @param window the window
	 * @param algorithm the algorithm
	 * @param burst the burst
	 * @param enabled whether the policy applies at all
	 * @param failureMode what happens when the store cannot decide
	 */
	public PolicyOverride(@Nullable Long limit, @Nullable Duration window, @Nullable Algorithm algorithm,
			@Nullable Long burst, @Nullable Boolean enabled, @Nullable FailureMode failureMode) {
		this(limit, window, algorithm, burst, enabled, failureMode, null, null, null, null);
	}

}
