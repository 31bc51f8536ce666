package io.github.ratelimit.integration;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.conformance.RecordingStore;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import jakarta.servlet.Filter;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The path of a rejected {@code @RateLimited} request on Spring MVC and on WebFlux, as the stack shows it when the
 * store decides: the web stack's adapters, the engine, the limiter, each module entered once and never entered again
 * after it was left, through few of the project's classes (docs/architecture.md, "A rejected request, step by step").
 */
class RejectedRequestPathTests {

	/** The stack of the store's last decision. */
	private final AtomicReference<StackTraceElement[]> stack = new AtomicReference<>();

	@Test
	void onSpringMvcARejectedRequestPassesEachModuleOnceThroughSixOfTheProjectsClasses() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class,
					HttpMessageConvertersAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
					WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withUserConfiguration(Orders.class)
			.withBean(RateLimitStore.class, this::stackRecordingStore)
			.run((context) -> {
				Filter filter = context.getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
					.getFilter();
				MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).addFilters(filter).build();
				mvc.perform(get("/orders")).andExpect(status().isOk());
				mvc.perform(get("/orders")).andExpect(status().isTooManyRequests());
			});
		List<String> classes = projectClassesOutermostFirst(this.stack.get());
		assertThat(classes).as("the project's classes between the request and the store")
			.containsExactly("io.github.ratelimit.webmvc.RateLimitFilter",
					"io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor",
					"io.github.ratelimit.aop.RateLimitInterceptor",
					"io.github.ratelimit.engine.RateLimitEngine", "io.github.ratelimit.engine.ObservedLimiter",
					"io.github.ratelimit.limiter.RateLimiter");
		assertThat(modulesEntered(classes)).as("the modules in the order entered, %s", classes)
			.containsExactly("ratelimit-spring-webmvc", "ratelimit-spring", "ratelimit-core");
	}

	@Test
	void onWebFluxARejectedRequestPassesEachModuleOnceThroughFiveOfTheProjectsClasses() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, WebFluxAutoConfiguration.class,
					RateLimitAutoConfiguration.class))
			.withUserConfiguration(ReactiveOrders.class)
			.withBean(RateLimitStore.class, this::stackRecordingStore)
			.run((context) -> {
				WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
				client.get().uri("/orders").exchange().expectStatus().isOk();
				client.get().uri("/orders").exchange().expectStatus().isEqualTo(429);
			});
		List<String> classes = projectClassesOutermostFirst(this.stack.get());
		assertThat(classes).as("the project's classes between the request and the store")
			.containsExactly("io.github.ratelimit.webflux.RequestThread",
					"io.github.ratelimit.webflux.ReactiveRateLimitInterceptor", "io.github.ratelimit.engine.RateLimitEngine",
					"io.github.ratelimit.engine.ObservedLimiter", "io.github.ratelimit.limiter.RateLimiter");
		assertThat(modulesEntered(classes)).as("the modules in the order entered, %s", classes)
			.containsExactly("ratelimit-spring-webflux", "ratelimit-spring", "ratelimit-core");
	}

	/** A still clock: no window ends between the two requests. */
	private RateLimitStore stackRecordingStore() {
		return new RecordingStore(InMemoryRateLimitStore.builder()
			.clock(MutableTimeSource.at("2030-01-01T00:00:30Z"))
			.build(), () -> this.stack.set(Thread.currentThread().getStackTrace()));
	}

	/** The modules of the classes, in the order entered: a module entered again after it was left appears twice. */
	private static List<String> modulesEntered(List<String> classes) {
		List<String> modules = new ArrayList<>();
		for (String type : classes) {
			String module = moduleOf(type);
			if (modules.isEmpty() || !modules.get(modules.size() - 1).equals(module)) {
				modules.add(module);
			}
		}
		return modules;
	}

	private static List<String> projectClassesOutermostFirst(StackTraceElement[] stack) {
		Set<String> classes = new LinkedHashSet<>();
		for (int i = stack.length - 1; i >= 0; i--) {
			String type = stack[i].getClassName();
			int nested = type.indexOf('$');
			String outer = (nested < 0) ? type : type.substring(0, nested);
			// The test's store and the SPI's defaults it falls back to are the store's own business.
			if (outer.startsWith("io.github.ratelimit.") && !outer.startsWith("io.github.ratelimit.store.")
					&& !outer.startsWith("io.github.ratelimit.conformance.")
					&& !outer.equals(RejectedRequestPathTests.class.getName())) {
				classes.add(outer);
			}
		}
		return new ArrayList<>(classes);
	}

	private static String moduleOf(String type) {
		String pkg = type.substring(0, type.lastIndexOf('.'));
		return switch (pkg) {
			case "io.github.ratelimit.webmvc" -> "ratelimit-spring-webmvc";
			case "io.github.ratelimit.webflux" -> "ratelimit-spring-webflux";
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

	@RestController
	static class ReactiveOrders {

		@RateLimited(name = "orders", limit = 1, window = "1h")
		@GetMapping("/orders")
		Mono<String> orders() {
			return Mono.just("orders");
		}

	}

}
