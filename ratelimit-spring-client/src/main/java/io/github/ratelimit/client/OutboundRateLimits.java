package io.github.ratelimit.client;

import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RuntimeChanges;
import org.jspecify.annotations.Nullable;

import org.springframework.http.client.ClientHttpRequestInterceptor;

/**
 * Limits on the calls this application makes to other services ("our fleet may call this API 500 times a minute"),
 * counted in the same stores as the limits on the calls it serves, so that every instance sharing the store shares
 * them. Each is a policy of {@code ratelimit.policies.<name>} ({@code limit}, {@code window}, {@code algorithm},
 * {@code max-wait}, ...), counted per host called; it appears on the actuator endpoint, in the metrics, and follows
 * run-time changes as any policy does.
 * <p>
 * A call takes a unit before it is sent, waiting up to the policy's {@code max-wait} for its turn; beyond that it
 * fails with {@link OutboundRateLimitException} and nothing is sent. What the called service answers is read: a
 * {@code Retry-After} on a 429 or 503, or its {@code RateLimit} fields with nothing left, hold calls to that host off
 * on this instance until then (they fail at once with the exception); a {@code RateLimit-Policy} quota tighter than
 * the policy's lowers the policy's limit to it on every instance (a run-time change, never above the limit
 * configured, never over an operator's change, and only by a policy whose calls all go to one host), and a quota as
 * loose as the configuration puts it back.
 * <pre class="code">
 * RestClient partner = restClientBuilder.requestInterceptor(outboundRateLimits.interceptor("partner-api")).build();
 * WebClient partner = webClientBuilder.filter(RateLimitedExchangeFilter.of(outboundRateLimits, "partner-api")).build();
 * </pre>
 *
 * @since 0.5.0
 */
public final class OutboundRateLimits {

	private final @Nullable RateLimitEngine engine;

	private final @Nullable RuntimeChanges changes;

	private final Map<String, OutboundPolicy> policies = new ConcurrentHashMap<>();

	/**
	 * Create the limits on outbound calls.
	 * @param engine the engine that decides them
	 * @param changes where a tighter quota a called service announces is applied, or {@code null} to follow none
	 */
	public OutboundRateLimits(RateLimitEngine engine, @Nullable RuntimeChanges changes) {
		this.engine = engine;
		this.changes = changes;
	}

	private OutboundRateLimits() {
		this.engine = null;
		this.changes = null;
	}

	/**
	 * Return limits that limit nothing: what the application gets with limits switched off
	 * ({@code ratelimit.enabled=false}), so that it starts and calls as before.
	 * @return the limits
	 */
	public static OutboundRateLimits unlimited() {
		return new OutboundRateLimits();
	}

	/**
	 * Return an interceptor for {@code RestClient} and {@code RestTemplate} that limits their calls by a policy.
	 * @param policy the policy's name, configured under {@code ratelimit.policies.<name>}
	 * @return the interceptor
	 * @throws io.github.ratelimit.engine.InvalidRateLimitPolicyException if the policy is not configured, or
	 * invalid, naming the property
	 */
	public ClientHttpRequestInterceptor interceptor(String policy) {
		return new RateLimitedClientInterceptor(policy(policy));
	}

	/** The policy of that name, declared on its first use. */
	OutboundPolicy policy(String name) {
		return this.policies.computeIfAbsent(name, (declared) -> new OutboundPolicy(this.engine, this.changes, declared));
	}

	/** The host a call is counted under: its URI's, lower-case; the authority or the whole URI without one. */
	static String host(URI uri) {
		String host = uri.getHost();
		if (host == null) {
			host = (uri.getRawAuthority() != null) ? uri.getRawAuthority() : "unknown";
		}
		return host.toLowerCase(java.util.Locale.ROOT);
	}

}
