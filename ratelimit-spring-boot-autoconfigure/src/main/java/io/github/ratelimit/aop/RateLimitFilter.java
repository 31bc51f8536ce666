package io.github.ratelimit.aop;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.pattern.PathPattern;

/**
 * The filter layer: limits applied before dispatch ({@code ratelimit.filters.*}), so that abusive traffic is
 * rejected before authentication, argument resolution and message conversion, and a path that matches no handler
 * still counts. Every filter that applies to a request, with the shared policies it draws, is decided together, all
 * or nothing, in one store call; a rejection answers as the method layer does (429, headers, problem body). What a
 * filter takes stays taken whatever later layers decide.
 * <p>
 * It is also where policies that count by outcome, of every layer, are settled: once the whole chain has run, from
 * the status the client gets (after error handling and Spring Security's entry points), and for an asynchronous
 * request once it completes. So it is registered even without filters.
 *
 * @since 0.2.0
 */
public final class RateLimitFilter extends OncePerRequestFilter {

	private static final String[] NO_NAMES = new String[0];

	private static final Object[] NO_ARGUMENTS = new Object[0];

	private static final MethodPolicy[] NO_POLICIES = new MethodPolicy[0];

	private final List<Rule> rules;

	private final RateLimitedMethodRegistry registry;

	private final PolicyEnforcer enforcer;

	/**
	 * Create the filter of the given definitions, checking them: a mistake fails with a message naming the filter,
	 * the attribute and the value.
	 * @param definitions the filters
	 * @param registry the registry their policies are declared with (and whose shared policies they draw)
	 * @param rateLimiter the limiter
	 * @param headersWriter the writer of the response headers
	 * @param clientIpResolver the resolver of the client's IP address
	 * @throws InvalidRateLimitPolicyException if a definition is invalid
	 */
	public RateLimitFilter(List<FilterDefinition> definitions, RateLimitedMethodRegistry registry,
			RateLimiter rateLimiter, RateLimitHeadersWriter headersWriter, ClientIpResolver clientIpResolver) {
		this.rules = FilterRules.build(definitions, registry);
		this.registry = registry;
		this.enforcer = new PolicyEnforcer(registry, rateLimiter, headersWriter, clientIpResolver);
	}

	/**
	 * Return whether any filter is configured.
	 * @return whether the filter has rules
	 */
	public boolean hasFilters() {
		return !this.rules.isEmpty();
	}

	/**
	 * Observe every decision ({@code ratelimit.decision}).
	 * @param observationRegistry the registry
	 * @param convention the convention, or {@code null} for the default one
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry,
			@Nullable RateLimitObservationConvention convention) {
		this.enforcer.setObservationRegistry(observationRegistry, convention);
	}

	/**
	 * Choose each request's plan with this resolver.
	 * @param planResolver the resolver, or {@code null}
	 */
	public void setPlanResolver(@Nullable RateLimitPlanResolver planResolver) {
		this.enforcer.setPlanResolver(planResolver);
	}

	/**
	 * Exempt clients in these networks from every filter keyed by the client IP.
	 * @param exempt the networks
	 */
	public void setExempt(ClientExemptions exempt) {
		this.enforcer.setExempt(exempt);
	}

	/**
	 * Return the names of the filters, in order.
	 * @return the names
	 */
	public List<String> filterNames() {
		return this.rules.stream().map(Rule::name).toList();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		Settlements.settledByFilter(request);
		MethodPolicy[] policies = this.rules.isEmpty() ? NO_POLICIES : policiesFor(request);
		if (policies.length > 0) {
			InvocationScope scope = new InvocationScope(NO_ARGUMENTS, request, NO_NAMES, this.registry.beanResolver());
			scope.setClientIpSupplier(this.enforcer.clientIp());
			PolicyEnforcer.Held held;
			try {
				held = this.enforcer.admit(policies, scope, request, response);
			}
			catch (RateLimitException ex) {
				writeProblem(response, ex);
				return;
			}
			request.setAttribute(PolicyEnforcer.FILTER_LAYER_ATTRIBUTE, held);
			Settlements.defer(request, held);
		}
		boolean failed = true;
		try {
			chain.doFilter(request, response);
			failed = false;
		}
		finally {
			// Every layer's policies that count by outcome, from the status the client gets.
			Settlements.settle(request, response, failed);
		}
	}

	/** The policies of every filter that applies, then the shared ones they draw, each once. */
	private MethodPolicy[] policiesFor(HttpServletRequest request) {
		String method = request.getMethod();
		PathContainer path = null;
		PathContainer normalized = null;
		Map<String, MethodPolicy> policies = null;
		for (Rule rule : this.rules) {
			// Spring MVC answers HEAD with the GET handler: a filter on GET applies to HEAD too.
			if (!rule.methods().isEmpty() && !rule.methods().contains(method)
					&& !("HEAD".equals(method) && rule.methods().contains("GET"))) {
				continue;
			}
			if (path == null) {
				path = RequestPath.parse(request.getRequestURI(), request.getContextPath()).pathWithinApplication();
				normalized = normalized(request, path);
			}
			if (rule.matches(path) || (normalized != null && rule.matches(normalized))) {
				if (policies == null) {
					policies = new LinkedHashMap<>();
				}
				policies.putIfAbsent(rule.policy().policy().name(), rule.policy());
			}
		}
		if (policies == null) {
			return NO_POLICIES;
		}
		List<MethodPolicy> all = new ArrayList<>(policies.values());
		for (Rule rule : this.rules) {
			if (policies.containsKey(rule.policy().policy().name())) {
				for (MethodPolicy shared : rule.shared()) {
					if (all.stream().noneMatch((policy) -> policy.policy().name().equals(shared.policy().name()))) {
						all.add(shared);
					}
				}
			}
		}
		return all.toArray(new MethodPolicy[0]);
	}

	/**
	 * The path as the container decoded and normalized it (dot segments resolved, repeated slashes merged, path
	 * parameters removed), when it differs from the raw path: what handler mappings match under
	 * {@code spring.mvc.pathmatch.matching-strategy=ant_path_matcher}. A filter applies if either matches, so no
	 * spelling of a path reaches a handler while its filters look away.
	 */
	private static @Nullable PathContainer normalized(HttpServletRequest request, PathContainer raw) {
		String text = raw.value();
		if (text.indexOf('%') < 0 && text.indexOf(';') < 0 && !text.contains("//") && !text.contains("/.")) {
			return null;
		}
		String servletPath = request.getServletPath();
		String pathInfo = request.getPathInfo();
		String decoded = (pathInfo != null) ? servletPath + pathInfo : servletPath;
		return decoded.equals(text) ? null : PathContainer.parsePath(decoded);
	}

	/** The method layer's answer, written here since no controller advice runs before dispatch. */
	private static void writeProblem(HttpServletResponse response, RateLimitException ex) throws IOException {
		ProblemDetail problem = ex.getBody();
		ex.applyRetryAfter(response);
		response.setStatus(ex.getStatusCode().value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		response.getWriter().write(ProblemJson.write(problem));
	}

	/**
	 * One filter: where it applies and the policy it enforces, with the shared policies it draws.
	 *
	 * @param name the filter's name
	 * @param patterns the paths it applies to
	 * @param methods the HTTP methods it applies to, or empty for all
	 * @param policy its policy
	 * @param shared the shared policies requests it applies to draw
	 */
	record Rule(String name, List<PathPattern> patterns, Set<String> methods, MethodPolicy policy,
			Collection<MethodPolicy> shared) {

		boolean matches(PathContainer path) {
			for (PathPattern pattern : this.patterns) {
				if (pattern.matches(path)) {
					return true;
				}
			}
			return false;
		}

	}

}
