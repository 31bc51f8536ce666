package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.web.HandlerMethods;
import io.github.ratelimit.webflux.WebFluxHandlerMethods;
import io.github.ratelimit.webmvc.MvcHandlerMethods;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint lists the handler methods that no limit covers, on Spring MVC and on WebFlux: a method with a policy of
 * its own is covered, so is one a filter applies to for each of its HTTP methods and paths; one mapped to an HTTP
 * method no filter takes is not. Each stack's view of its handler methods backs off for the application's own.
 */
class UnlimitedHandlersEndpointTests {

	private static final String[] FILTERS = { "management.endpoints.web.exposure.include=ratelimits",
			"ratelimit.filters.edge.paths=/filtered/**", "ratelimit.filters.edge.limit=100",
			"ratelimit.filters.edge.window=1h", "ratelimit.filters.writes.paths=/mixed/**",
			"ratelimit.filters.writes.methods=POST", "ratelimit.filters.writes.limit=100",
			"ratelimit.filters.writes.window=1h" };

	@Test
	void onSpringMvcTheEndpointListsTheHandlersNoLimitCovers() {
		WebTestSupport.webApplication()
			.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues(FILTERS)
			.withUserConfiguration(MvcHandlers.class)
			.run((context) -> {
				assertThat(context).getBean(HandlerMethods.class).isInstanceOf(MvcHandlerMethods.class);
				assertThat(context.getBean(RateLimitsEndpoint.class).rateLimits().unlimited()).containsExactly(
						"* /open MvcHandlers#open()", "GET /mixed/read MvcHandlers#read()");
			});
	}

	@Test
	void onWebFluxTheEndpointListsTheHandlersNoLimitCovers() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, WebFluxAutoConfiguration.class,
					RateLimitAutoConfiguration.class, RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.withPropertyValues(FILTERS)
			.withUserConfiguration(ReactiveHandlers.class)
			.run((context) -> {
				assertThat(context).getBean(HandlerMethods.class).isInstanceOf(WebFluxHandlerMethods.class);
				assertThat(context.getBean(RateLimitsEndpoint.class).rateLimits().unlimited()).containsExactly(
						"* /open ReactiveHandlers#open()", "GET /mixed/read ReactiveHandlers#read()");
			});
	}

	@Test
	void theApplicationsOwnViewOfItsHandlersWins() {
		HandlerMethods none = java.util.List::of;
		WebTestSupport.webApplication()
			.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class))
			.withPropertyValues(FILTERS)
			.withUserConfiguration(MvcHandlers.class)
			.withBean(HandlerMethods.class, () -> none)
			.run((context) -> {
				assertThat(context).getBean(HandlerMethods.class).isSameAs(none);
				assertThat(context.getBean(RateLimitsEndpoint.class).rateLimits().unlimited()).isEmpty();
			});
	}

	@RestController
	static class MvcHandlers {

		@RateLimited(name = "limited", limit = 10, window = "1h")
		@GetMapping("/limited")
		String limited() {
			return "limited";
		}

		@RequestMapping("/open")
		String open() {
			return "open";
		}

		@GetMapping("/filtered/{id}")
		String filtered() {
			return "filtered";
		}

		@GetMapping("/mixed/read")
		String read() {
			return "read";
		}

		@PostMapping("/mixed/write")
		String write() {
			return "write";
		}

	}

	@RestController
	static class ReactiveHandlers {

		@RateLimited(name = "limited", limit = 10, window = "1h")
		@GetMapping("/limited")
		Mono<String> limited() {
			return Mono.just("limited");
		}

		@RequestMapping("/open")
		Mono<String> open() {
			return Mono.just("open");
		}

		@GetMapping("/filtered/{id}")
		Mono<String> filtered() {
			return Mono.just("filtered");
		}

		@GetMapping("/mixed/read")
		Mono<String> read() {
			return Mono.just("read");
		}

		@PostMapping("/mixed/write")
		Mono<String> write() {
			return Mono.just("write");
		}

	}

}
