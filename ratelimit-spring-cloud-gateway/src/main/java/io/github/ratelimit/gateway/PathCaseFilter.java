package io.github.ratelimit.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import io.github.ratelimit.engine.RateLimitEngine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.OrderedGatewayFilter;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.handler.predicate.PathRoutePredicateFactory;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Refuses, before routing, a request whose path is a rate-limited path in other letter case: it matches a
 * {@code Path} pattern of a route with a {@code RequestRateLimiter} filter, or a path of a filter of
 * {@code ratelimit.filters}, only when case is ignored. The gateway answers it 404 with a problem body, as Spring
 * answers a path it has no handler for, and it reaches neither a route nor the service.
 * <p>
 * Why: the gateway matches its routes' {@code Path} predicates case-sensitively (Spring Cloud Gateway has no setting
 * for it), as the filter layer matches its paths. So {@code /api/v1/Resources} misses the route of
 * {@code /api/v1/resources}, takes a catch-all one such as {@code /api/**}, and is forwarded as it is, unlimited, to a
 * service that may well ignore case (IIS and ASP.NET do, Express does by default, so does a case-insensitive file
 * system).
 * <p>
 * Why refuse rather than limit it like the path itself: the limited route would have to take it, and the only way is
 * to make the gateway's {@code PathPatternParser} case-insensitive ({@code PathRoutePredicateFactory} has one parser
 * for every route, and no property or per-route setting). That would change where every route of the gateway,
 * unlimited ones included, sends requests, and would not reach the filters, which decide before routing. Refused
 * with 404, a client gets what a case-sensitive service would answer it, and a case-insensitive service never sees a
 * spelling that walks around a limit. Only the spellings the limited route does not take are refused: a path that
 * matches one of the route's patterns as it is spelled is that route's and passes (a captured variable keeps its
 * case, and the route's key resolver decides whether {@code U1} and {@code u1} are one key). A filter's path matches
 * without a trailing slash, as the filter layer matches it.
 * <p>
 * Which routes: those with a {@code RequestRateLimiter} filter, of the configuration or of the Java DSL, whatever its
 * limiter; their patterns are read from their predicates, so the Java DSL's {@code path(...)} counts as the
 * configuration's {@code Path=}. The patterns are compiled once, when the routes are known and again whenever a
 * refresh of them completes; a request is matched against them case-insensitively, and against the matched route's
 * own patterns as spelled only then: a few pattern matches, like the gateway's own routing. Patterns without a letter
 * have no case variant and are left out. Two limited routes whose paths differ only in case are not supported: each
 * is the other's case variant, and is refused.
 *
 * @since 0.3.0
 */
public final class PathCaseFilter implements WebFilter, Ordered, ApplicationListener<RefreshRoutesResultEvent>,
		SmartInitializingSingleton {

	/** Right after {@link NormalizedPathFilter}: the path is in its normal form by then. */
	public static final int ORDER = NormalizedPathFilter.ORDER + 1;

	private static final byte[] PROBLEM = ("{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,"
			+ "\"detail\":\"The request path differs from a rate-limited path only in letter case, and paths are "
			+ "case-sensitive here. Send the path as the API spells it.\"}")
		.getBytes(StandardCharsets.UTF_8);

	/** A variable without a regular expression, whose value keeps its case either way: {@code {id}}, {@code {*rest}}. */
	private static final Pattern PLAIN_VARIABLE = Pattern.compile("\\{\\*?\\w+}");

	private static final PathPatternParser CASE_INSENSITIVE = new PathPatternParser();

	private static final Log logger = LogFactory.getLog(PathCaseFilter.class);

	static {
		CASE_INSENSITIVE.setCaseSensitive(false);
	}

	private final RateLimitEngine engine;

	private final ObjectProvider<RouteLocator> routeLocator;

	private volatile @Nullable RouteLocator routes;

	/** The limited paths, compiled; {@code null} until the routes are known. */
	private final AtomicReference<@Nullable LimitedPaths> limited = new AtomicReference<>();

	/**
	 * Create the filter.
	 * @param engine the engine, whose filters' paths are limited too
	 * @param routeLocator the gateway's routes, looked up once every bean is created, as the gateway configures them
	 * after this library
	 */
	public PathCaseFilter(RateLimitEngine engine, ObjectProvider<RouteLocator> routeLocator) {
		this.engine = engine;
		this.routeLocator = routeLocator;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public void afterSingletonsInstantiated() {
		this.routes = this.routeLocator.getIfUnique();
	}

	/** The routes are known, or changed: compile their limited paths again. */
	@Override
	public void onApplicationEvent(RefreshRoutesResultEvent event) {
		if (event.isSuccess() && event.getSource() instanceof RouteLocator locator) {
			// Cached by now: this completes at once, without blocking. Should it fail, the paths stay as they were.
			locator.getRoutes()
				.collectList()
				.map(this::compile)
				.subscribe(this.limited::set, (ex) -> logger.warn("Could not read the limited paths of the gateway's "
						+ "routes: their case variants are refused as before the refresh", ex));
		}
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		LimitedPaths limited = this.limited.get();
		if (limited != null) {
			return filter(limited, exchange, chain);
		}
		// A request before the routes were first refreshed: read them as the gateway's routing is about to.
		RouteLocator routes = this.routes;
		Mono<List<Route>> found = (routes != null) ? routes.getRoutes().collectList() : Mono.just(List.of());
		return found.flatMap((list) -> {
			LimitedPaths compiled = compile(list);
			return filter(this.limited.compareAndSet(null, compiled) ? compiled : this.limited.get(), exchange, chain);
		});
	}

	private static Mono<Void> filter(@Nullable LimitedPaths limited, ServerWebExchange exchange,
			WebFilterChain chain) {
		if (limited == null || !limited.refuses(exchange.getRequest().getPath().pathWithinApplication())) {
			return chain.filter(exchange);
		}
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.NOT_FOUND);
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(PROBLEM)));
	}

	LimitedPaths compile(List<Route> routes) {
		List<Limited> limited = new ArrayList<>();
		for (Route route : routes) {
			if (hasRateLimiter(route)) {
				List<String> patterns = new ArrayList<>();
				route.getPredicate().accept((predicate) -> {
					if (predicate.getConfig() instanceof PathRoutePredicateFactory.Config path) {
						patterns.addAll(path.getPatterns());
					}
				});
				add(limited, patterns, false);
			}
		}
		for (List<String> paths : this.engine.catalog().filterPaths().values()) {
			add(limited, paths, true);
		}
		return new LimitedPaths(List.copyOf(limited));
	}

	/** Whether a route has a {@code RequestRateLimiter} filter, of its own or a default one, whatever its limiter. */
	static boolean hasRateLimiter(Route route) {
		for (GatewayFilter filter : route.getFilters()) {
			GatewayFilter delegate = filter;
			while (delegate instanceof OrderedGatewayFilter ordered) {
				delegate = ordered.getDelegate();
			}
			// The factory's filter is a lambda: a class of its nest, which nothing else's is.
			if (RequestRateLimiterGatewayFilterFactory.class.isAssignableFrom(delegate.getClass().getNestHost())) {
				return true;
			}
		}
		return false;
	}

	private static void add(List<Limited> limited, List<String> patterns, boolean withoutTrailingSlash) {
		List<PathPattern> insensitive = new ArrayList<>();
		List<PathPattern> sensitive = new ArrayList<>();
		for (String pattern : patterns) {
			sensitive.add(PathPatternParser.defaultInstance.parse(pattern));
			if (PLAIN_VARIABLE.matcher(pattern).replaceAll("").chars().anyMatch(PathCaseFilter::isCased)) {
				insensitive.add(CASE_INSENSITIVE.parse(pattern));
			}
		}
		if (!insensitive.isEmpty()) {
			limited.add(new Limited(List.copyOf(insensitive), List.copyOf(sensitive), withoutTrailingSlash));
		}
	}

	private static boolean isCased(int c) {
		return Character.toLowerCase(c) != Character.toUpperCase(c);
	}

	/** The limited paths: each route's, or each filter's, patterns. */
	record LimitedPaths(List<Limited> paths) {

		/** Whether the path is one of them in other letter case, and none of them as spelled. */
		boolean refuses(PathContainer path) {
			PathContainer withoutSlash = withoutTrailingSlash(path); // the path itself, unless it ends with a slash
			for (Limited limited : this.paths) {
				if (limited.isCaseVariant(path, limited.withoutTrailingSlash ? withoutSlash : path)) {
					return true;
				}
			}
			return false;
		}

		private static PathContainer withoutTrailingSlash(PathContainer path) {
			List<PathContainer.Element> elements = path.elements();
			int last = elements.size() - 1;
			return (last > 0 && elements.get(last) instanceof PathContainer.Separator) ? path.subPath(0, last) : path;
		}

	}

	/**
	 * One route's, or one filter's, patterns: as compiled case-insensitively (those with a letter), and as spelled.
	 */
	record Limited(List<PathPattern> insensitive, List<PathPattern> sensitive, boolean withoutTrailingSlash) {

		/** Whether either spelling of the path matches a pattern when case is ignored, and neither one as spelled. */
		boolean isCaseVariant(PathContainer path, PathContainer other) {
			return (matches(this.insensitive, path) || (other != path && matches(this.insensitive, other)))
					&& !matches(this.sensitive, path) && (other == path || !matches(this.sensitive, other));
		}

		private static boolean matches(List<PathPattern> patterns, PathContainer path) {
			for (PathPattern pattern : patterns) {
				if (pattern.matches(path)) {
					return true;
				}
			}
			return false;
		}

	}

}
