package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicySpec;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.context.ApplicationListener;
import org.springframework.web.server.ServerWebExchange;

/**
 * Spring Cloud Gateway's {@code RateLimiter}, decided by this library's engine: any algorithm, store and failure mode,
 * the configured header style with {@code Retry-After}, and the problem body of a rejection (with
 * {@link RateLimitProblemFilter}). A route names its policy and its limits in the {@code RequestRateLimiter} filter's
 * arguments under {@value #PREFIX}; {@code ratelimit.policies.<name>.*} overrides them, as it overrides an
 * annotation's:
 *
 * <pre class="code">
 * filters:
 *   - name: RequestRateLimiter
 *     args:
 *       key-resolver: "#{&#64;clientIpKeyResolver}"
 *       ratelimit.policy: resources
 *       ratelimit.limit: 5
 *       ratelimit.window: 1m
 * </pre>
 *
 * A route without a {@code ratelimit.policy} is counted under its id, and one without arguments of ours takes its
 * limits from {@code ratelimit.policies.<route id>}. A configured route with neither fails start-up; another is logged
 * once and its requests refused, failing closed ({@link RouteLimitsLogger} lists every route's limit). A route has
 * at most one filter with this limiter, default filters included (the gateway asks a limiter about a route, not a
 * filter), and a configured route without an id names its policy (the gateway's generated ids differ by instance). Routes of the application's configuration are
 * checked at start-up, so that an invalid one fails it; routes added later are checked when the gateway builds them.
 * Two routes naming one policy share its counters, so they must declare the same limits.
 *
 * @since 0.2.0
 */
public final class GatewayRateLimiter implements RateLimiter<GatewayRateLimiter.RouteLimit>,
		ApplicationListener<FilterArgsEvent> {

	/** The prefix of this limiter's arguments in a {@code RequestRateLimiter} filter. */
	public static final String PREFIX = "ratelimit";

	/** The bean name, for a route's {@code rate-limiter: "#{@gatewayRateLimiter}"}. */
	public static final String BEAN_NAME = "gatewayRateLimiter";

	static final String FILTER = "RequestRateLimiter";

	/** The filter's argument naming another limiter than the default. */
	private static final String LIMITER_ARGUMENT = "rate-limiter";

	/** Admitted, with no headers to hand over: set on the response already, or none to set. */
	private static final Response ALLOWED = new Response(true, Map.of());

	/** Refused, with no headers: a route that uses this limiter but declares no limit. */
	private static final Response REFUSED = new Response(false, Map.of());

	/** The limit of every route that uses this limiter but declares none: it fails closed. */
	private static final RouteLimit UNDECLARED = new RouteLimit("", Map.of(), null);

	private static final Log logger = LogFactory.getLog(GatewayRateLimiter.class);

	/** The engine that decides, or {@code null} for {@link #unlimited()}. */
	private final @Nullable RateLimitEngine engine;

	private final Map<String, RouteLimit> routes = new ConcurrentHashMap<>();

	private final @Nullable RouteLimit fixed;

	/** The filters every route of a definition gets, to tell which routes use this limiter. */
	private final List<FilterDefinition> defaultFilters;

	/** The policies of the limiters {@link #forPolicy} gave to routes of the Java DSL, for the start-up log. */
	private final Set<String> javaDslPolicies = ConcurrentHashMap.newKeySet();

	/**
	 * Create the limiter, checking the routes of the application's configuration.
	 * @param engine the engine that decides
	 * @param routes the routes configured in the application's properties
	 * @param defaultFilters the filters every route gets
	 * @throws io.github.ratelimit.engine.InvalidRateLimitPolicyException if a route's limits are invalid
	 */
	public GatewayRateLimiter(RateLimitEngine engine, List<RouteDefinition> routes,
			List<FilterDefinition> defaultFilters) {
		this.engine = engine;
		this.fixed = null;
		this.defaultFilters = List.copyOf(defaultFilters);
		for (int i = 0; i < routes.size(); i++) {
			RouteDefinition route = routes.get(i);
			List<FilterDefinition> limiting = new ArrayList<>();
			for (FilterDefinition filter : defaultFilters) {
				if (isOurs(filter)) {
					limiting.add(filter);
				}
			}
			for (FilterDefinition filter : route.getFilters()) {
				if (isOurs(filter)) {
					limiting.add(filter);
				}
			}
			if (limiting.isEmpty()) {
				continue;
			}
			String id = route.getId();
			String where = (id != null) ? "route '" + id + "'" : "route #" + i;
			if (limiting.size() > 1) {
				// The gateway asks a limiter about a route, never about one of its filters.
				throw new InvalidRateLimitPolicyException(String.valueOf(id), where + " has " + limiting.size() + " "
						+ FILTER + " filters with this limiter (default-filters included), which would count as one: "
						+ "keep one per route, and draw a shared quota with ratelimit.filters instead");
			}
			Map<String, Object> values = ours(limiting.get(0).getArgs());
			if (id == null) {
				// The gateway gives a route without an id a random one, different on every instance.
				if (values.get("policy") == null) {
					throw new InvalidRateLimitPolicyException("", where + " has no id: name its policy with '"
							+ PREFIX + ".policy', or the route an id, so that every instance counts it alike");
				}
				declare(values.remove("policy").toString().trim(), where, values);
				continue;
			}
			this.routes.put(id, declareRoute(id, values));
		}
	}

	private GatewayRateLimiter(@Nullable RateLimitEngine engine, RouteLimit fixed) {
		this.engine = engine;
		this.fixed = fixed;
		this.defaultFilters = List.of();
	}

	/**
	 * Return a limiter that admits every request of every route and sets no header, with no engine: the gateway's
	 * while every limit is switched off ({@code ratelimit.enabled=false}), so that routes naming it
	 * ({@code rate-limiter: "#{@gatewayRateLimiter}"}) or built with {@link #forPolicy} start and route as before.
	 * Routes' arguments are not checked.
	 * @return the limiter
	 * @since 0.3.0
	 */
	public static GatewayRateLimiter unlimited() {
		return new GatewayRateLimiter(null, new RouteLimit("", Map.of(), null));
	}

	/**
	 * Return a limiter that decides one policy on every route it is given to: what a route of the Java DSL passes to
	 * {@code requestRateLimiter(config -> config.setRateLimiter(...))}.
	 * @param policy the policy's name
	 * @param values its attributes as a route's arguments spell them without the prefix ({@code limit},
	 * {@code window}, {@code algorithm}, {@code burst}, ...), under {@code ratelimit.policies.<policy>.*}
	 * @return the limiter; the {@linkplain #unlimited() unlimited} limiter itself
	 * @throws io.github.ratelimit.engine.InvalidRateLimitPolicyException if the policy is invalid
	 */
	public GatewayRateLimiter forPolicy(String policy, Map<String, ?> values) {
		if (this.engine == null) {
			return this;
		}
		GatewayRateLimiter limiter = new GatewayRateLimiter(this.engine,
				declare(policy, "gateway route limiter for policy '" + policy + "'", new LinkedHashMap<>(values)));
		this.javaDslPolicies.add(policy);
		return limiter;
	}

	/** Check a route's limits when the gateway builds it (a route added after start-up, or refreshed). */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		Map<String, Object> values = ours(event.getArgs());
		if (this.fixed == null && !values.isEmpty()) {
			this.routes.put(event.getRouteId(), declareRoute(event.getRouteId(), values));
		}
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		return Mono.deferContextual((context) -> {
			RouteLimit limit = limitOf(routeId);
			if (limit == UNDECLARED) {
				ServerWebExchange exchange = RateLimitProblemFilter.exchange(context);
				if (exchange != null) {
					exchange.getAttributes().put(RateLimitProblemFilter.UNDECLARED, routeId);
				}
				return Mono.just(REFUSED);
			}
			RateLimitEngine engine = this.engine;
			if (limit.spec == null || engine == null) {
				// Disabled by ratelimit.policies.<name>.enabled=false, or every limit is off (unlimited()).
				return Mono.just(ALLOWED);
			}
			ServerWebExchange exchange = RateLimitProblemFilter.exchange(context);
			RateLimitExchange view = (exchange != null) ? RateLimitWebFilter.exchangeOf(exchange) : null;
			return RateLimitWebFilter
				.onRequestThread(exchange, () -> engine.decideKeyAsync(limit.spec, id,
						(view != null) ? view.request() : null))
				.map((outcome) -> response(outcome, view));
		});
	}

	/**
	 * The gateway's answer. With the exchange, the headers are set on its response (replacing an earlier layer's, whose
	 * limits the outcome's headers include) rather than handed to the gateway, which would add them as second values.
	 */
	private static Response response(RateLimitOutcome outcome, @Nullable RateLimitExchange view) {
		if (view == null) {
			Map<String, String> headers = new LinkedHashMap<>();
			outcome.headers().forEach((name, values) -> headers.put(name, String.join(", ", values)));
			return new Response(!outcome.isRejected(), headers);
		}
		view.setResponseHeaders(outcome.headers());
		if (outcome.isRejected()) {
			view.request().setAttribute(RateLimitProblemFilter.REJECTED, outcome);
		}
		return outcome.isRejected() ? new Response(false, Map.of()) : ALLOWED;
	}

	private RouteLimit limitOf(String routeId) {
		if (this.fixed != null) {
			return this.fixed;
		}
		RouteLimit limit = this.routes.get(routeId);
		if (limit == null) {
			// A route with no arguments of ours: counted under its id, with ratelimit.policies.<id>.
			limit = this.routes.computeIfAbsent(routeId, this::declareUndeclared);
		}
		return limit;
	}

	/**
	 * A route the configuration did not declare (the Java DSL without {@link #forPolicy}, a route added at run time
	 * with no arguments of ours), under {@code ratelimit.policies.<route id>}. Without a limit there it fails closed:
	 * logged once at ERROR, and every request of it refused (503 with a problem body, through
	 * {@link RateLimitProblemFilter}). A route of the configuration without a limit fails start-up; this one cannot,
	 * being built later or by code, and letting its requests through would leave a route its author meant to limit open
	 * to every client until someone reads the log. Refused, it is found at its first request, if not at start-up
	 * ({@link RouteLimitsLogger}).
	 */
	private RouteLimit declareUndeclared(String routeId) {
		try {
			return declareRoute(routeId, new LinkedHashMap<>());
		}
		catch (InvalidRateLimitPolicyException ex) {
			logger.error("Route '" + routeId + "' uses the rate limiter but declares no limit, so its requests are "
					+ "refused (503): " + ex.getMessage() + ". Give the route '" + PREFIX + ".*' arguments, set "
					+ "ratelimit.policies." + routeId + ".*, or use forPolicy in the Java DSL.");
			return UNDECLARED;
		}
	}

	/**
	 * Return the limit of a route for {@link RouteLimitsLogger}: the one this limiter knows, or else, for a route whose
	 * definition uses this limiter, the one declared now, so that a route without a limit is found before its first
	 * request.
	 * @return the limit, {@link #isUndeclared undeclared} for a route that uses this limiter without one, or
	 * {@code null} for a route that does not use this limiter, as far as it can tell
	 */
	@Nullable RouteLimit limitOf(String routeId, @Nullable RouteDefinition definition) {
		if (this.fixed != null) {
			return null;
		}
		RouteLimit known = this.routes.get(routeId);
		if (known != null || definition == null) {
			return known;
		}
		for (List<FilterDefinition> filters : List.of(this.defaultFilters, definition.getFilters())) {
			for (FilterDefinition filter : filters) {
				if (isOurs(filter)) {
					return limitOf(routeId);
				}
			}
		}
		return null;
	}

	static boolean isUndeclared(RouteLimit limit) {
		return limit == UNDECLARED;
	}

	/** Return the policies of the limiters {@link #forPolicy} gave to routes of the Java DSL. */
	Set<String> javaDslPolicies() {
		return Set.copyOf(this.javaDslPolicies);
	}

	/** Whether a configured filter is this limiter's: arguments of ours, or no other limiter named. */
	private static boolean isOurs(FilterDefinition filter) {
		if (!FILTER.equals(filter.getName())) {
			return false;
		}
		String limiter = filter.getArgs().get(LIMITER_ARGUMENT);
		return !ours(filter.getArgs()).isEmpty() || limiter == null || limiter.contains(BEAN_NAME);
	}

	private RouteLimit declareRoute(String routeId, Map<String, Object> values) {
		Object policy = values.remove("policy");
		String name = (policy != null && !policy.toString().isBlank()) ? policy.toString().trim() : routeId;
		return declare(name, "route '" + routeId + "'", values);
	}

	private RouteLimit declare(String policy, String where, Map<String, Object> values) {
		values.remove("policy");
		if (values.containsKey("key")) {
			throw new InvalidRateLimitPolicyException(policy, where + ": '" + PREFIX + ".key' has no effect on a "
					+ "route, whose key is its key resolver's; set the filter's 'key-resolver' instead");
		}
		PolicyCatalog catalog = Objects.requireNonNull(this.engine, "An unlimited limiter declares nothing")
			.catalog();
		PolicySpec spec = catalog.declare(policy, where, new PolicyValues(where + " " + PREFIX, values));
		return new RouteLimit(policy, Collections.unmodifiableMap(values), spec);
	}

	/** This limiter's arguments of a filter, without their prefix. */
	private static Map<String, Object> ours(Map<String, ?> args) {
		Map<String, Object> values = new LinkedHashMap<>();
		args.forEach((name, value) -> {
			if (name.startsWith(PREFIX + ".")) {
				values.put(name.substring(PREFIX.length() + 1), value);
			}
		});
		return values;
	}

	@Override
	public Map<String, RouteLimit> getConfig() {
		return Collections.unmodifiableMap(this.routes);
	}

	@Override
	public Class<RouteLimit> getConfigClass() {
		return RouteLimit.class;
	}

	/** A limit with nothing declared: routes declare theirs through their arguments. */
	@Override
	public RouteLimit newConfig() {
		return new RouteLimit("", Map.of(), null);
	}

	/**
	 * The limit of a route: the policy it counts under and the values its arguments gave.
	 *
	 * @param policy the policy's name
	 * @param values the route's values, without the prefix
	 * @param spec the policy as decided, or {@code null} if it is disabled
	 */
	public record RouteLimit(String policy, Map<String, Object> values, @Nullable PolicySpec spec) {
	}

}
