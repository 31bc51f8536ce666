package io.github.ratelimit.integration;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.conformance.ConcurrentTestHarness;
import io.github.ratelimit.web.RateLimitExceededException;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * Application contexts standing for separate instances of one application, and hammering them from many threads.
 */
final class Instances {

	private Instances() {
	}

	/**
	 * A web application with rate limiting, Spring Data Redis and the {@link HotController}.
	 */
	static WebApplicationContextRunner application(String... properties) {
		return new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withUserConfiguration(HotController.class)
			.withPropertyValues(properties);
	}

	/**
	 * Call {@code hit(key)} from {@code threadsPerContext} threads per context, {@code calls} times each, and
	 * count the admissions; any failure other than a rejection fails the test.
	 */
	static Result hammer(List<ApplicationContext> contexts, int threadsPerContext, int calls, String key) {
		List<HotController> controllers = new ArrayList<>();
		for (ApplicationContext context : contexts) {
			controllers.add(context.getBean(HotController.class));
		}
		AtomicInteger admitted = new AtomicInteger();
		AtomicInteger rejected = new AtomicInteger();
		AtomicInteger thread = new AtomicInteger();
		ConcurrentTestHarness.run(threadsPerContext * contexts.size(), () -> {
			HotController controller = controllers.get(thread.getAndIncrement() % controllers.size());
			for (int i = 0; i < calls; i++) {
				try {
					controller.hit(key);
					admitted.incrementAndGet();
				}
				catch (RateLimitExceededException ex) {
					rejected.incrementAndGet();
				}
			}
		});
		return new Result(admitted.get(), rejected.get());
	}

	record Result(int admitted, int rejected) {
	}

}
