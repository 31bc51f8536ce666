package io.github.ratelimit.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.handler.AsyncPredicate;
import org.springframework.cloud.gateway.handler.predicate.GatewayPredicate;
import org.springframework.cloud.gateway.handler.predicate.PathRoutePredicateFactory;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's refusal of a rate-limited path in other letter case: a spelling that a limited route's {@code Path}
 * pattern, or a filter's path, matches only when case is ignored is answered 404 with a problem before routing, so a
 * catch-all route never forwards it; the path as the route or the filter spells it passes, and so does every other
 * path, a case variant of an unlimited route's included.
 */
class PathCaseFilterTests {

	/** The sample gateway's routes, and a route without a limit whose pattern has capitals. */
	private final List<Route> routes = List.of(
			route("resources", path("/api/v1/resources", "/api/v1/resources/"), limited(true)),
			route("orders", path("/api/v1/users/{userId}/orders").and(get()), limited(false)),
			route("docs", path("/Docs/**"), (exchange, chain) -> chain.filter(exchange)),
			route("any", path("/{*path}")), route("api", path("/api/**")));

	@ParameterizedTest
	@ValueSource(strings = { "/api/v1/Resources", "/API/v1/resources", "/api/v1/RESOURCES/", "/Api/V1/Resources",
			"/api/v1/%52esources", "/api/v1/Resources;x=1", "/api/v1/users/u-1/Orders", "/API/v1/users/u-1/orders",
			"/api/v1/ANYTHING", "/api/v1/Anything/", "/api/v1/anyTHING;x=1" })
	void aLimitedPathInOtherLetterCaseIsRefusedWith404AndAProblemBeforeRouting(String path) {
		MockServerWebExchange exchange = exchange(path);
		assertThat(routed(known(), exchange)).isFalse();
		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.NOT_FOUND);
		assertThat(exchange.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(exchange.getResponse().getBodyAsString().block()).contains("\"status\":404")
			.contains("letter case");
	}

	@ParameterizedTest
	@ValueSource(strings = { "/api/v1/resources", "/api/v1/resources/", "/api/v1/resources;x=1", "/api/v1/%72esources",
			"/api/v1/users/U-1/orders", "/api/v1/users/u-1/orders/x", "/api/v1/anything", "/api/v1/anything/",
			"/api/v1/Resources/x", "/api/v1/resourcesX", "/API/v1/other", "/docs/x", "/DOCS/x", "/", "/Api" })
	void theLimitedPathsAsSpelledAndEveryOtherPathPass(String path) {
		MockServerWebExchange exchange = exchange(path);
		assertThat(routed(known(), exchange)).isTrue();
		assertThat(exchange.getResponse().getStatusCode()).isNull();
	}

	@Test
	void aRouteIsLimitedByItsRequestRateLimiterFilterWhateverWrapsIt() {
		assertThat(PathCaseFilter.hasRateLimiter(this.routes.get(0))).isTrue();
		assertThat(PathCaseFilter.hasRateLimiter(this.routes.get(1))).isTrue();
		assertThat(PathCaseFilter.hasRateLimiter(this.routes.get(2))).isFalse();
		assertThat(PathCaseFilter.hasRateLimiter(this.routes.get(4))).isFalse();
	}

	@Test
	void beforeTheRoutesAreRefreshedTheyAreReadFromTheLocatorAndARefreshReplacesThem() {
		DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
		beans.registerSingleton("routeLocator", (RouteLocator) () -> Flux.fromIterable(this.routes));
		PathCaseFilter filter = new PathCaseFilter(engine(), beans.getBeanProvider(RouteLocator.class));
		filter.afterSingletonsInstantiated();
		assertThat(routed(filter, exchange("/api/v1/Resources"))).as("read from the locator").isFalse();
		assertThat(routed(filter, exchange("/api/v1/Reports"))).isTrue();
		RouteLocator refreshed = () -> Flux
			.just(route("reports", path("/api/v1/reports"), limited(true)), route("api", path("/api/**")));
		filter.onApplicationEvent(new RefreshRoutesResultEvent(refreshed));
		assertThat(routed(filter, exchange("/api/v1/Reports"))).as("a route added by the refresh").isFalse();
		assertThat(routed(filter, exchange("/api/v1/Resources"))).as("a route the refresh removed").isTrue();
		filter.onApplicationEvent(new RefreshRoutesResultEvent((RouteLocator) Flux::empty, new IllegalStateException()));
		assertThat(routed(filter, exchange("/api/v1/Reports"))).as("a failed refresh changes nothing").isFalse();
	}

	@Test
	void withoutRoutesOnlyTheFiltersPathsAreLimited() {
		PathCaseFilter filter = new PathCaseFilter(engine(),
				new DefaultListableBeanFactory().getBeanProvider(RouteLocator.class));
		filter.afterSingletonsInstantiated();
		assertThat(routed(filter, exchange("/api/v1/Anything"))).isFalse();
		assertThat(routed(filter, exchange("/api/v1/Resources"))).isTrue();
	}

	/** The filter once the routes are known. */
	private PathCaseFilter known() {
		PathCaseFilter filter = new PathCaseFilter(engine(),
				new DefaultListableBeanFactory().getBeanProvider(RouteLocator.class));
		filter.onApplicationEvent(new RefreshRoutesResultEvent((RouteLocator) () -> Flux.fromIterable(this.routes)));
		return filter;
	}

	/** An engine with one filter, on {@code /api/v1/anything}. */
	private static RateLimitEngine engine() {
		PolicyCatalog catalog = PolicyCatalog.builder()
			.filters(List.of(new io.github.ratelimit.engine.FilterDefinition("gw", 0, List.of("/api/v1/anything"),
					List.of(), new PolicyValues("ratelimit.filters.gw", Map.of("limit", 2L, "window",
							Duration.ofHours(1))),
					List.of())))
			.build();
		return RateLimitEngine
			.builder(catalog,
					io.github.ratelimit.limiter.RateLimiter.builder(InMemoryRateLimitStore.builder().build()).build(),
					new StandardRateLimitHeadersWriter(), (request) -> String.valueOf(request.getRemoteAddr()))
			.build();
	}

	private static boolean routed(PathCaseFilter filter, ServerWebExchange exchange) {
		boolean[] routed = { false };
		filter.filter(exchange, (passed) -> {
			routed[0] = true;
			return Mono.empty();
		}).block();
		return routed[0];
	}

	/** The filter of a {@code RequestRateLimiter}, as the configuration (ordered) or the Java DSL builds it. */
	private static GatewayFilter limited(boolean ordered) {
		GatewayFilter filter = new RequestRateLimiterGatewayFilterFactory(GatewayRateLimiter.unlimited(),
				(exchange) -> Mono.just("k"))
			.apply(new RequestRateLimiterGatewayFilterFactory.Config());
		return ordered ? new OrderedGatewayFilter(filter, 1) : filter;
	}

	/** A {@code Path} predicate as the gateway's factory builds it: its patterns are its configuration. */
	private static AsyncPredicate<ServerWebExchange> path(String... patterns) {
		PathRoutePredicateFactory.Config config = new PathRoutePredicateFactory.Config()
			.setPatterns(List.of(patterns));
		return AsyncPredicate.from(new GatewayPredicate() {

			@Override
			public boolean test(ServerWebExchange exchange) {
				throw new AssertionError("The filter routes nothing");
			}

			@Override
			public Object getConfig() {
				return config;
			}

		});
	}

	private static AsyncPredicate<ServerWebExchange> get() {
		return AsyncPredicate.from((exchange) -> exchange.getRequest().getMethod() == HttpMethod.GET);
	}

	private static Route route(String id, AsyncPredicate<ServerWebExchange> predicate, GatewayFilter... filters) {
		return Route.async().id(id).uri("http://upstream.test").asyncPredicate(predicate).filters(filters).build();
	}

	private static MockServerWebExchange exchange(String path) {
		return MockServerWebExchange
			.from(MockServerHttpRequest.method(HttpMethod.GET, URI.create("http://gateway.test" + path)).build());
	}

}
