package io.github.ratelimit.integration;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import jakarta.servlet.Filter;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The path of a rejected {@code @RateLimited} request on Spring MVC, as the stack shows it when the store decides: the
 * servlet filter, the method's interceptor, the engine, the limiter, each module entered once and never entered again
 * after it was left, through few of the project's classes (docs/architecture.md, "A rejected request, step by step").
 */
class RejectedRequestPathTests {

	/** The stack of the store's last decision. */
	private final AtomicReference<StackTraceElement[]> stack = new AtomicReference<>();

	@Test
	void aRejectedRequestPassesEachModuleOnceThroughAtMostEightOfTheProjectsClasses() throws Exception {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class,
					HttpMessageConvertersAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
					WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withUserConfiguration(Orders.class)
			// A still clock: no window ends between the two requests.
			.withBean(RateLimitStore.class, () -> new StackRecordingStore(InMemoryRateLimitStore.builder()
				.clock(MutableTimeSource.at("2030-01-01T00:00:30Z"))
				.build()))
			.run((context) -> {
				Filter filter = context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
					.getFilter();
				MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).addFilters(filter).build();
				mvc.perform(get("/orders")).andExpect(status().isOk());
				mvc.perform(get("/orders")).andExpect(status().isTooManyRequests());
			});
		List<String> classes = projectClassesOutermostFirst(this.stack.get());
		assertThat(classes).as("the project's classes between the request and the store")
			.startsWith("io.github.ratelimit.webmvc.RateLimitFilter")
			.endsWith("io.github.ratelimit.limiter.RateLimiter")
			.hasSizeLessThanOrEqualTo(8);
		List<String> modules = new ArrayList<>();
		for (String type : classes) {
			String module = moduleOf(type);
			if (modules.isEmpty() || !modules.get(modules.size() - 1).equals(module)) {
				modules.add(module);
			}
		}
		assertThat(modules).as("the modules in the order entered, %s", classes)
			.containsExactly("ratelimit-spring-webmvc", "ratelimit-spring", "ratelimit-core");
	}

	private static List<String> projectClassesOutermostFirst(StackTraceElement[] stack) {
		Set<String> classes = new LinkedHashSet<>();
		for (int i = stack.length - 1; i >= 0; i--) {
			String type = stack[i].getClassName();
			int nested = type.indexOf('$');
			String outer = (nested < 0) ? type : type.substring(0, nested);
			if (outer.startsWith("io.github.ratelimit.") && !outer.equals(RejectedRequestPathTests.class.getName())) {
				classes.add(outer);
			}
		}
		return new ArrayList<>(classes);
	}

	private static String moduleOf(String type) {
		String pkg = type.substring(0, type.lastIndexOf('.'));
		return switch (pkg) {
			case "io.github.ratelimit.webmvc" -> "ratelimit-spring-webmvc";
			case "io.github.ratelimit.aop", "io.github.ratelimit.engine", "io.github.ratelimit.web",
					"io.github.ratelimit.observation", "io.github.ratelimit.metrics" ->
				"ratelimit-spring";
			default -> "ratelimit-core";
		};
	}

	@RestController
	static class Orders {

		@RateLimited(name = "orders", limit = 1, window = "1h")
		@GetMapping("/orders")
		String orders() {
			return "orders";
		}

	}

	/** The in-memory store, keeping the stack of each decision. */
	private final class StackRecordingStore implements RateLimitStore {

		private final InMemoryRateLimitStore delegate;

		StackRecordingStore(InMemoryRateLimitStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			RejectedRequestPathTests.this.stack.set(Thread.currentThread().getStackTrace());
			return this.delegate.tryAcquire(policy, key, cost);
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.delegate.reset(policy, key);
		}

		@Override
		public boolean isLocal() {
			return true;
		}

	}

}
