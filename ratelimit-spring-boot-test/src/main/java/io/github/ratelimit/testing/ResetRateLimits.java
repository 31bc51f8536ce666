package io.github.ratelimit.testing;

import io.github.ratelimit.limiter.RateLimiter;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.context.ApplicationContext;
import org.springframework.test.context.junit.jupiter.SpringExtension;

/**
 * A JUnit 5 extension that forgets every rate limit counter before each test, so that tests sharing a Spring context
 * (and a limit) do not depend on their order: in memory, in Redis (the starter's keys only, by key prefix; never
 * {@code FLUSHDB}) or in DynamoDB, and in the limiter's deny cache and in-memory fallback.
 * <pre class="code">
 * &#64;SpringBootTest
 * &#64;ExtendWith(ResetRateLimits.class)
 * class OrdersApiTests { ... }
 * </pre>
 * Outside JUnit, {@link #reset(ApplicationContext)} does the same.
 *
 * @since 0.1.0
 */
public final class ResetRateLimits implements BeforeEachCallback {

	@Override
	public void beforeEach(ExtensionContext context) {
		reset(SpringExtension.getApplicationContext(context));
	}

	/**
	 * Forget every counter of the application's limiter.
	 * @param context the application context
	 */
	public static void reset(ApplicationContext context) {
		context.getBeanProvider(RateLimiter.class).ifAvailable(RateLimiter::clear);
	}

}
