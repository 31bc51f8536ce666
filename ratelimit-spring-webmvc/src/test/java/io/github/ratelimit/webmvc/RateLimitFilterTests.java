package io.github.ratelimit.webmvc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.FilterDefinition;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.filter.OncePerRequestFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet filter: a request it has nothing to decide or settle for (no filter applies to it, no policy is settled
 * after the response) passes untouched, and the adapter it builds is
 * the one the method layer finds.
 */
class RateLimitFilterTests {

	@Test
	void aRequestWithNoFilterToDecideAndNothingToSettleAfterTheResponsePassesWithoutBookkeeping() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(engine(Plain.class));
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/orders");
		List<String> attributesInTheChain = new ArrayList<>();
		FilterChain chain = (chained, chainedResponse) -> attributesInTheChain
			.addAll(Collections.list(chained.getAttributeNames()));
		filter.doFilter(request, new MockHttpServletResponse(), chain);
		// Only OncePerRequestFilter's own mark, that the filter ran.
		assertThat(attributesInTheChain).as("what the filter wrote on the request")
			.containsExactly(RateLimitFilter.class.getName() + OncePerRequestFilter.ALREADY_FILTERED_SUFFIX);
	}

	@Test
	void aRequestNoFilterAppliesToPassesWithoutBookkeepingWhileFiltersExist() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(engine(Plain.class, new FilterDefinition("edge", 0,
				List.of("/api/**"), List.of("POST"), new PolicyValues("ratelimit.filters.edge",
						Map.of("limit", 5L, "window", "1h")), List.of())));
		for (MockHttpServletRequest request : List.of(new MockHttpServletRequest("GET", "/orders"),
				new MockHttpServletRequest("GET", "/api/orders"))) {
			List<String> attributesInTheChain = new ArrayList<>();
			MockHttpServletResponse response = new MockHttpServletResponse();
			filter.doFilter(request, response, (chained, chainedResponse) -> attributesInTheChain
				.addAll(Collections.list(chained.getAttributeNames())));
			assertThat(attributesInTheChain).as("what the filter wrote on " + request.getMethod() + " "
					+ request.getRequestURI())
				.containsExactly(RateLimitFilter.class.getName() + OncePerRequestFilter.ALREADY_FILTERED_SUFFIX);
			assertThat(response.getHeaderNames()).isEmpty();
		}
		MockHttpServletResponse filtered = new MockHttpServletResponse();
		filter.doFilter(new MockHttpServletRequest("POST", "/api/orders"), filtered, (chained, chainedResponse) -> {
		});
		assertThat(filtered.getHeaderNames()).as("the filter's limit on the request it applies to").isNotEmpty();
	}

	@Test
	void theMethodLayerFindsTheAdapterTheFilterBuiltRatherThanBuildingASecond() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(engine(CountingByOutcome.class));
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/login");
		MockHttpServletResponse response = new MockHttpServletResponse();
		List<Object> adapters = new ArrayList<>();
		FilterChain chain = (chained, chainedResponse) -> {
			adapters.add(chained.getAttribute(ServletRateLimitRequest.class.getName()));
			RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, response));
			try {
				adapters.add(new ServletCurrentExchange().get());
			}
			finally {
				RequestContextHolder.resetRequestAttributes();
			}
		};
		filter.doFilter(request, response, chain);
		assertThat(adapters).hasSize(2).doesNotContainNull();
		assertThat(adapters.get(1)).as("the method layer's adapter").isSameAs(adapters.get(0));
	}

	@Test
	void anAdapterOfAWrappedRequestIsBuiltForTheWrapper() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/orders");
		MockHttpServletResponse response = new MockHttpServletResponse();
		ServletRateLimitRequest first = ServletRateLimitRequest.of(request, response);
		HttpServletRequestWrapper wrapper = new HttpServletRequestWrapper(request);
		assertThat(ServletRateLimitRequest.of(request, response)).isSameAs(first);
		assertThat(ServletRateLimitRequest.of(wrapper, response)).as("a wrapper may answer otherwise (a principal)")
			.isNotSameAs(first);
	}

	private static RateLimitEngine engine(Class<?> api, FilterDefinition... filters) {
		PolicyCatalog catalog = PolicyCatalog.builder().filters(List.of(filters)).build();
		catalog.register(api);
		return RateLimitEngine.builder(catalog, RateLimiter.of(InMemoryRateLimitStore.create(100)),
				new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
	}

	static class Plain {

		@RateLimited(name = "orders", limit = 10, window = "1m")
		public String orders() {
			return "orders";
		}

	}

	static class CountingByOutcome {

		@RateLimited(name = "login", limit = 5, window = "1m", countOn = "401")
		public String login() {
			return "welcome";
		}

	}

}
