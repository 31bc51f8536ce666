package io.github.ratelimit.grpc;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.Principal;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.web.RateLimitRequest;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import org.jspecify.annotations.Nullable;

/**
 * A gRPC call as the engine sees a request: its metadata as headers (so a trusted proxy's {@code X-Forwarded-For}
 * and a plan's header are read as on HTTP; a name sent more than once gives its last value, as gRPC's own
 * interceptors read it), the transport's peer as the remote address, Spring Security's user as the principal. Key
 * expressions see the request message as {@code #request} (the metadata for a method whose client streams, which has
 * no message at call start) and the metadata's text entries as {@code #metadata}.
 */
final class GrpcRateLimitRequest implements RateLimitRequest {

	private final ServerCall<?, ?> call;

	private final Metadata metadata;

	private final @Nullable Principal principal;

	private final Map<String, Object> attributes = new ConcurrentHashMap<>();

	private @Nullable Object message;

	GrpcRateLimitRequest(ServerCall<?, ?> call, Metadata metadata, @Nullable Principal principal) {
		this.call = call;
		this.metadata = metadata;
		this.principal = principal;
	}

	/** The message the call is decided for, once it came. */
	void setMessage(@Nullable Object message) {
		this.message = message;
	}

	@Override
	public String getMethod() {
		return "POST"; // every gRPC call is an HTTP/2 POST
	}

	@Override
	public @Nullable String getHeader(String name) {
		Metadata.Key<String> key = key(name);
		return (key != null) ? this.metadata.get(key) : null;
	}

	@Override
	public List<String> getHeaders(String name) {
		Metadata.Key<String> key = key(name);
		Iterable<String> values = (key != null) ? this.metadata.getAll(key) : null;
		if (values == null) {
			return List.of();
		}
		List<String> list = new java.util.ArrayList<>();
		values.forEach(list::add);
		return list;
	}

	@Override
	public @Nullable String getRemoteAddr() {
		SocketAddress address = this.call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
		if (address instanceof InetSocketAddress inet && inet.getAddress() != null) {
			return inet.getAddress().getHostAddress();
		}
		return null; // an in-process or a Unix socket's peer: no address to key by
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return this.principal;
	}

	@Override
	public Object getNativeRequest() {
		Object message = this.message;
		return (message != null) ? message : this.metadata;
	}

	@Override
	public Map<String, Object> getExpressionVariables() {
		return Map.of("metadata", MetadataText.of(this.metadata));
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.attributes.get(name);
	}

	@Override
	public void setAttribute(String name, Object value) {
		this.attributes.put(name, value);
	}

	/** The key of a text entry; none for a binary one's name or a name gRPC refuses. */
	static Metadata.@Nullable Key<String> key(String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		if (lower.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
			return null;
		}
		try {
			return Metadata.Key.of(lower, Metadata.ASCII_STRING_MARSHALLER);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

}
