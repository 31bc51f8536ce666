package io.github.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.engine.PolicySpec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.gateway.event.RefreshRoutesResultEvent;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.route.RouteDefinitionLocator;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ApplicationListener;

/**
 * Logs at INFO, once the gateway's routes are known (at start-up, and again whenever a refresh changes the picture),
 * one line with every route and the policy that limits it, naming every route without a limit, so that no route is
 * left unlimited by accident unseen. A route whose definition uses {@link GatewayRateLimiter} without declaring a
 * limit is declared then, so that it is reported now (at ERROR, and refused) rather than at its first request.
 * <p>
 * A route of the Java DSL shows no policy: its filter hides which limiter it was given. The line names the policies of
 * the {@link GatewayRateLimiter#forPolicy} limiters instead.
 *
 * @since 0.3.0
 */
public final class RouteLimitsLogger implements ApplicationListener<RefreshRoutesResultEvent> {

	private static final Log logger = LogFactory.getLog(RouteLimitsLogger.class);

	private final GatewayRateLimiter limiter;

	private final ObjectProvider<RouteDefinitionLocator> definitions;

	private final AtomicReference<String> logged = new AtomicReference<>("");

	/**
	 * Create the logger.
	 * @param limiter the gateway's limiter, the {@code RequestRateLimiter} filter's default
	 * @param definitions the gateway's locator of route definitions, to tell which routes use the limiter; looked up
	 * once the routes are known, as the gateway configures it after this library
	 */
	public RouteLimitsLogger(GatewayRateLimiter limiter, ObjectProvider<RouteDefinitionLocator> definitions) {
		this.limiter = limiter;
		this.definitions = definitions;
	}

	@Override
	public void onApplicationEvent(RefreshRoutesResultEvent event) {
		if (!event.isSuccess() || !(event.getSource() instanceof RouteLocator routes)) {
			return;
		}
		// Both are cached or in memory by now: this completes at once, without blocking.
		RouteDefinitionLocator definitions = this.definitions.getIfAvailable(() -> Flux::empty);
		Mono.zip(routes.getRoutes().map(Route::getId).collectList(),
				definitions.getRouteDefinitions()
					.filter((definition) -> definition.getId() != null)
					.collectMap(RouteDefinition::getId))
			.subscribe((found) -> log(found.getT1(), found.getT2()),
					(ex) -> logger.warn("Could not list the rate limits of the gateway's routes", ex));
	}

	private void log(List<String> routeIds, Map<String, RouteDefinition> definitions) {
		String line = describe(routeIds, definitions);
		if (!line.equals(this.logged.getAndSet(line))) {
			logger.info(line);
		}
	}

	String describe(List<String> routeIds, Map<String, RouteDefinition> definitions) {
		List<String> limited = new ArrayList<>();
		List<String> unlimited = new ArrayList<>();
		List<String> refused = new ArrayList<>();
		for (String id : routeIds) {
			RouteDefinition definition = definitions.get(id);
			GatewayRateLimiter.RouteLimit limit = this.limiter.limitOf(id, definition);
			PolicySpec spec = (limit != null) ? limit.spec() : null;
			if (limit != null && GatewayRateLimiter.isUndeclared(limit)) {
				refused.add(quote(id));
			}
			else if (limit != null && spec != null) {
				limited.add(quote(id) + " by policy " + quote(limit.policy()) + " (" + describe(spec.policy()) + ")");
			}
			else if (limit != null) {
				unlimited.add(quote(id) + " (policy " + quote(limit.policy()) + " disabled)");
			}
			else if (definition != null && usesAnotherLimiter(definition)) {
				limited.add(quote(id) + " by another RateLimiter");
			}
			else {
				unlimited.add(quote(id));
			}
		}
		StringBuilder line = new StringBuilder("Rate limits of the gateway's routes: ")
			.append(limited.isEmpty() ? "none" : String.join(", ", limited))
			.append("; without a limit: ")
			.append(unlimited.isEmpty() ? "none" : String.join(", ", unlimited));
		if (!refused.isEmpty()) {
			line.append("; using the limiter without a limit, so refused: ").append(String.join(", ", refused));
		}
		Set<String> javaDsl = new TreeSet<>(this.limiter.javaDslPolicies());
		if (!javaDsl.isEmpty()) {
			List<String> policies = javaDsl.stream().map(RouteLimitsLogger::quote).toList();
			line.append(" (a route of the Java DSL is limited by the forPolicy limiter it was given, if any: policies ")
				.append(String.join(", ", policies))
				.append(')');
		}
		return line.toString();
	}

	private static String describe(RateLimitPolicy policy) {
		return policy.describe() + ((policy.mode() == PolicyMode.SHADOW) ? ", shadow: counted, not enforced" : "");
	}

	private static boolean usesAnotherLimiter(RouteDefinition definition) {
		for (FilterDefinition filter : definition.getFilters()) {
			if (GatewayRateLimiter.FILTER.equals(filter.getName())) {
				return true;
			}
		}
		return false;
	}

	private static String quote(@Nullable String text) {
		return "'" + text + "'";
	}

}
