package io.github.ratelimit.web;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Resolves the client's IP address, the default counter key. Define a bean of this type to replace the default,
 * which uses {@link HttpServletRequest#getRemoteAddr()}. Behind a proxy, set
 * {@code server.forward-headers-strategy=native} (or {@code framework}) so that the remote address is taken from
 * {@code X-Forwarded-For}/{@code Forwarded} of trusted proxies only; reading those headers yourself lets any client
 * choose its own key.
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
	String resolve(HttpServletRequest request);

}
