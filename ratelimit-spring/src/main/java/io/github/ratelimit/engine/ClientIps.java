package io.github.ratelimit.engine;

import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitRequest;
import org.apache.commons.logging.LogFactory;

/**
 * The client address of a request, the {@code #clientIp} of key expressions and the key of policies keyed by the
 * client: the resolver's answer, or the connection's peer when the resolver fails.
 */
final class ClientIps {

	private final ClientIpResolver resolver;

	private final ThrottledWarning failure = new ThrottledWarning(LogFactory.getLog(RateLimitEngine.class));

	ClientIps(ClientIpResolver resolver) {
		this.resolver = resolver;
	}

	String resolve(RateLimitRequest request) {
		String address;
		try {
			address = this.resolver.resolve(request);
		}
		catch (RuntimeException ex) {
			// The connection's peer: what a client cannot choose, rather than a 500 for every request.
			this.failure.warn("Client IP resolver failed (" + ex + "); the connection's "
					+ "peer address is the key");
			address = request.getRemoteAddr();
		}
		return (address != null && !address.isEmpty()) ? address : PolicySpec.NO_REQUEST_KEY;
	}

}
