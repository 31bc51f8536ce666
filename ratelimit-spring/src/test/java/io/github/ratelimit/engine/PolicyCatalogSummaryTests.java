package io.github.ratelimit.engine;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up line of what a catalogue limits: methods, filters and a web stack's routes counted once each, shared
 * policies counted as policies only, disabled ones not at all.
 */
class PolicyCatalogSummaryTests {

	@Test
	void methodsFiltersAndRoutesAreCountedOnceEachWithThePoliciesThatLimitThem() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.policies(Map.of("account", new PolicyValues("ratelimit.policies.account",
					Map.of("limit", 1000L, "window", "1h", "key", "'all'")), "off",
					new PolicyValues("ratelimit.policies.off", Map.of("enabled", false))))
			.filters(List.of(new FilterDefinition("edge", 0, List.of("/**"), List.of(),
					new PolicyValues("ratelimit.filters.edge", Map.of("limit", 100L, "window", "1m")),
					List.of("account"))))
			.build();
		catalog.register(Api.class);
		catalog.declare("route-orders", "route 'orders'", new PolicyValues("route 'orders'",
				Map.of("limit", 10L, "window", "1m")));
		catalog.afterSingletonsInstantiated();
		assertThat(PolicyCatalogSummary.of(catalog))
			.isEqualTo("Rate limits: 2 methods, 1 filter and 1 gateway route limited by 5 policies");
	}

	@Test
	void aCatalogueThatLimitsNothingSaysSo() {
		assertThat(PolicyCatalogSummary.of(PolicyCatalog.builder().build()))
			.isEqualTo("Rate limits: no method, filter or gateway route is limited");
	}

	static class Api {

		@RateLimited(name = "orders", limit = 10, window = "1m")
		@RateLimited(name = "off", limit = 10, window = "1m")
		public String orders() {
			return "orders";
		}

		@RateLimited(name = "search", limit = 10, window = "1m")
		public String search() {
			return "search";
		}

	}

}
