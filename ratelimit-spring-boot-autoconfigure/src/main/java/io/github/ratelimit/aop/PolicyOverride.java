package io.github.ratelimit.aop;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
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
 * @since 0.1.0
 */
public record PolicyOverride(@Nullable Long limit, @Nullable Duration window, @Nullable Algorithm algorithm,
		@Nullable Long burst, @Nullable Boolean enabled, @Nullable FailureMode failureMode) {

	/** No override at all. */
	public static final PolicyOverride NONE = new PolicyOverride(null, null, null, null, null, null);

}
