package io.github.ratelimit.webmvc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.PolicyCatalog;
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
 * The servlet filter: a request it has nothing to decide or settle for passes untouched, and the adapter it builds is
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

	private static RateLimitEngine engine(Class<?> api) {
		PolicyCatalog catalog = PolicyCatalog.builder().build();
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
