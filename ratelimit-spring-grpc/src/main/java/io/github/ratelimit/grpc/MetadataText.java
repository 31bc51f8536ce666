package io.github.ratelimit.grpc;

import java.util.AbstractMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.grpc.Metadata;
import org.jspecify.annotations.Nullable;

/**
 * The text entries of a call's metadata as key expressions read them, {@code #metadata['x-api-key']}: each name's
 * last value, as gRPC's own interceptors (an authentication's) read it, so that a key sent twice cannot be checked
 * on one value and counted on another; names in lower case; binary entries ({@code -bin}) left out.
 */
final class MetadataText extends AbstractMap<String, String> {

	private final Metadata metadata;

	private MetadataText(Metadata metadata) {
		this.metadata = metadata;
	}

	static MetadataText of(Metadata metadata) {
		return new MetadataText(metadata);
	}

	@Override
	public @Nullable String get(@Nullable Object name) {
		if (!(name instanceof String text)) {
			return null;
		}
		Metadata.Key<String> key = GrpcRateLimitRequest.key(text);
		return (key != null) ? this.metadata.get(key) : null;
	}

	@Override
	public boolean containsKey(@Nullable Object name) {
		return get(name) != null;
	}

	@Override
	public Set<Entry<String, String>> entrySet() {
		Map<String, String> entries = new LinkedHashMap<>();
		for (String name : this.metadata.keys()) {
			String value = get(name);
			if (value != null) {
				entries.put(name, value);
			}
		}
		return entries.entrySet();
	}

}
