package io.github.ratelimit.web;


/**
 * Resolves the client's IP address, the default counter key. The default is a {@link TrustedProxiesClientIpResolver}
 * configured by {@code ratelimit.client-ip.*}: the connection's peer, unless that is a trusted proxy, and then the
 * first address of the forwarded chain in the one header the proxies write, read from the right, that is not one.
 * Define a bean of this type to replace it; it must never fail, nor return a value a client chose.
 * <p>
 * Spring Boot's {@code server.forward-headers-strategy} changes what {@link RateLimitRequest#getRemoteAddr()} says,
 * and with it the peer this resolver starts from. {@code framework} takes the <em>leftmost</em>
 * {@code X-Forwarded-For} value, which the client writes: it is safe only if the edge proxy overwrites (not appends
 * to) that header. {@code native} (Tomcat's {@code RemoteIpValve}) trusts every private address range unless
 * {@code server.tomcat.remoteip.internal-proxies} says otherwise, so any client inside those ranges can choose its
 * own address. Set the strategy to {@code none} and use {@code ratelimit.client-ip.trusted-proxies}: when the property
 * is not set, Boot uses {@code native} on a cloud platform it detects (Kubernetes, Cloud Foundry, Heroku and
 * others), so leaving it out is not the same as {@code none} there.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ClientIpResolver {

	/**
	 * Return the client's IP address.
	 * @param request the current request
	 * @return the address, never {@code null}
	 */
	String resolve(RateLimitRequest request);

}
