package io.github.ratelimit.gateway;

import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.web.server.ServerWebExchange;

/**
 * Keys a gateway route's limit by the client's address as {@code ratelimit.client-ip} resolves it: the address the
 * trusted proxies forwarded, else the connection's peer. A client cannot pick it by writing a header the proxies do
 * not write, and an address in {@code ratelimit.client-ip.exempt} passes the routes keyed by it.
 *
 * @since 0.2.0
 */
public final class ClientIpKeyResolver implements KeyResolver {

	/** The bean name, for a route's {@code key-resolver: "#{@clientIpKeyResolver}"}. */
	public static final String BEAN_NAME = "clientIpKeyResolver";

	private final ClientIpResolver clientIpResolver;

	/**
	 * Create the resolver.
	 * @param clientIpResolver the resolver of the client's address
	 */
	public ClientIpKeyResolver(ClientIpResolver clientIpResolver) {
		this.clientIpResolver = clientIpResolver;
	}

	@Override
	public Mono<String> resolve(ServerWebExchange exchange) {
		RateLimitRequest request = RateLimitWebFilter.exchangeOf(exchange).request();
		String address;
		try {
			address = this.clientIpResolver.resolve(request);
		}
		catch (RuntimeException ex) {
			// The connection's peer, as everywhere else: what a client cannot choose, rather than an error.
			address = request.getRemoteAddr();
		}
		return (address != null && !address.isEmpty()) ? Mono.just(address) : Mono.empty();
	}

}
