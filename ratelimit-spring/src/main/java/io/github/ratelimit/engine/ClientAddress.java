package io.github.ratelimit.engine;

/**
 * The {@code #clientIp} variable of key expressions: the client's address (or network, for IPv6) as the
 * {@code ClientIpResolver} gave it. As a key it lives in the namespace of the client-IP fallback, so that
 * {@code #request.getHeader('X-API-Key') ?: #clientIp} cannot be matched by a client sending an address as its API
 * key; in text (concatenated) it is the address.
 *
 * @param address the address
 */
record ClientAddress(String address) {

	/** The key of this address: in the namespace no expression's text can reach. */
	String key() {
		return PolicySpec.FALLBACK_PREFIX + this.address;
	}

	@Override
	public String toString() {
		return this.address;
	}

}
