package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionLocator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up line of the gateway's routes: each with the policy that limits it, every route without a limit named,
 * and a route that uses the limiter without a limit found before its first request.
 */
class RouteLimitsLoggerTests {

	private static final ObjectProvider<RouteDefinitionLocator> NO_LOCATOR = new DefaultListableBeanFactory()
		.getBeanProvider(RouteDefinitionLocator.class);

	@Test
	void everyRouteIsListedWithThePolicyThatLimitsItAndEveryRouteWithoutALimitIsNamed() {
		RouteDefinition resources = route("resources", "RequestRateLimiter", "ratelimit.policy", "resources",
				"ratelimit.limit", "5", "ratelimit.window", "1m", "ratelimit.algorithm", "fixed");
		RouteDefinition theirs = route("theirs", "RequestRateLimiter", "rate-limiter", "#{@redisRateLimiter}");
		RouteDefinition api = route("api", "AddRequestHeader", "name", "X-Seen");
		GatewayRateLimiter limiter = limiter(Map.of(), resources, theirs, api);
		limiter.forPolicy("search", Map.of("limit", 10, "window", "1s"));
		String line = new RouteLimitsLogger(limiter, NO_LOCATOR).describe(List.of("resources", "theirs", "api", "dsl"),
				Map.of("resources", resources, "theirs", theirs, "api", api));
		assertThat(line).isEqualTo("Rate limits of the gateway's routes: 'resources' by policy 'resources' "
				+ "(FIXED 5 per 1m), 'theirs' by another RateLimiter; without a limit: 'api', 'dsl' (a route of the "
				+ "Java DSL is limited by the forPolicy limiter it was given, if any: policies 'search')");
	}

	@Test
	void aRouteThatUsesTheLimiterWithoutALimitIsFoundAtStartUpAndRefused() {
		GatewayRateLimiter limiter = limiter(Map.of());
		// Both added after start-up: one with a limit of its own, as the gateway builds it.
		limiter.onApplicationEvent(new FilterArgsEvent(this, "late", Map.of("ratelimit.limit", "3",
				"ratelimit.window", "1m", "key-resolver", "#{@clientIpKeyResolver}")));
		RouteDefinition late = route("late", "RequestRateLimiter", "ratelimit.limit", "3", "ratelimit.window", "1m");
		RouteDefinition forgotten = route("forgotten", "RequestRateLimiter", "key-resolver", "#{@clientIpKeyResolver}");
		String line = new RouteLimitsLogger(limiter, NO_LOCATOR).describe(List.of("late", "forgotten"),
				Map.of("late", late, "forgotten", forgotten));
		assertThat(line).isEqualTo("Rate limits of the gateway's routes: 'late' by policy 'late' (FIXED 3 per "
				+ "1m); without a limit: none; using the limiter without a limit, so refused: 'forgotten'");
		assertThat(limiter.isAllowed("forgotten", "k").block().isAllowed()).isFalse();
	}

	private static GatewayRateLimiter limiter(Map<String, PolicyValues> policies, RouteDefinition... routes) {
		PolicyCatalog catalog = PolicyCatalog.builder().policies(policies).build();
		RateLimitEngine engine = RateLimitEngine
			.builder(catalog, RateLimiter.builder(InMemoryRateLimitStore.builder().build()).build(),
					new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
		GatewayRateLimiter limiter = new GatewayRateLimiter(engine, List.of(routes), List.of());
		catalog.afterSingletonsInstantiated();
		return limiter;
	}

	private static RouteDefinition route(String id, String filterName, String... args) {
		RouteDefinition route = new RouteDefinition();
		route.setId(id);
		FilterDefinition filter = new FilterDefinition();
		filter.setName(filterName);
		Map<String, String> arguments = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i += 2) {
			arguments.put(args[i], args[i + 1]);
		}
		filter.setArgs(arguments);
		List<FilterDefinition> filters = new ArrayList<>();
		filters.add(filter);
		route.setFilters(filters);
		return route;
	}

}
