package io.github.ratelimit.web;

/**
 * The one header a {@link TrustedProxiesClientIpResolver} reads the client's address from, behind trusted proxies:
 * the header those proxies write. Only that header is read, never another in its place, since proxies pass on the
 * headers they do not write, and a client can write any of them.
 *
 * @since 0.2.0
 */
public enum ForwardedHeader {

	/**
	 * {@code X-Forwarded-For}, a chain each proxy appends its peer's address to: what nginx
	 * ({@code $proxy_add_x_forwarded_for}), HAProxy ({@code option forwardfor}), Envoy, Traefik, AWS, Google Cloud
	 * and Azure load balancers and Cloudflare write.
	 */
	X_FORWARDED_FOR("X-Forwarded-For"),

	/**
	 * {@code Forwarded} (RFC 7239), the same chain as elements with a {@code for} parameter: what HAProxy
	 * ({@code option forwarded}) and Spring Cloud Gateway write, if the proxies in front of them do too.
	 */
	FORWARDED("Forwarded"),

	/**
	 * {@code X-Real-IP}, one address that the proxy sets to its peer's, replacing what the client sent (nginx's
	 * {@code proxy_set_header X-Real-IP $remote_addr}): for a single proxy in front of the application.
	 */
	X_REAL_IP("X-Real-IP");

	private final String headerName;

	ForwardedHeader(String headerName) {
		this.headerName = headerName;
	}

	/**
	 * Return the header's name.
	 * @return the name
	 */
	public String headerName() {
		return this.headerName;
	}

}
