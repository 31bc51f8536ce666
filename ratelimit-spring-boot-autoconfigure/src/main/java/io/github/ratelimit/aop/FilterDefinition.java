package io.github.ratelimit.aop;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import org.jspecify.annotations.Nullable;

/**
 * One limit of the filter layer, as configured under {@code ratelimit.filters.<name>}.
 *
 * @param name the filter's name, which is its policy's name
 * @param order the order among filters, lower first
 * @param paths the request paths it applies to, in {@code PathPattern} syntax
 * @param methods the HTTP methods it applies to, or empty for all
 * @param key the key expression over {@code #request} and {@code #clientIp}, or {@code null} for the client IP
 * @param limit the limit
 * @param window the window
 * @param algorithm the algorithm
 * @param burst the burst, or {@code null} for the limit
 * @param cost the units each request takes
 * @param mode whether it rejects or only reports
 * @param failureMode what happens when the store cannot decide, or {@code null} for the global one
 * @param skip the condition under which it does not apply, or {@code null}
 * @param policies the shared policies requests it applies to draw too
 * @since 0.2.0
 */
public record FilterDefinition(String name, int order, List<String> paths, List<String> methods, @Nullable String key,
		@Nullable Long limit, @Nullable Duration window, Algorithm algorithm, @Nullable Long burst, long cost,
		PolicyMode mode, @Nullable FailureMode failureMode, @Nullable String skip, List<String> policies) {
}
