package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.SharedChanges;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The changes made to policies at run time, in one hash, {@code <prefix>:changes}: a field per policy, its values
 * encoded as one line. Outside the keys {@code clear()} deletes (they start with <code>&lt;prefix&gt;:{</code>), and
 * without an expiry: a change stays until it is dropped. Each instance reads the whole hash about once a second,
 * unless it holds more than {@value #MAX_FIELDS} fields: a hash filled by someone else is not read at all.
 */
final class RedisSharedChanges implements SharedChanges {

	/** More fields than policies any application declares: past this, the hash is not read. */
	static final int MAX_FIELDS = 1_024;

	private final RedisConnectionFactory connectionFactory;

	private final byte[] key;

	RedisSharedChanges(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.connectionFactory = connectionFactory;
		this.key = (keyPrefix + ":changes").getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public void put(String policy, Map<String, String> values) {
		byte[] field = policy.getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (values.isEmpty()) {
				connection.hashCommands().hDel(this.key, field);
			}
			else {
				connection.hashCommands()
					.hSet(this.key, field, SharedChanges.encode(values).getBytes(StandardCharsets.UTF_8));
			}
		}
		catch (RuntimeException ex) {
			throw new RateLimitStoreException("Could not keep the change of rate limit policy '" + policy
					+ "' in Redis: " + ex.getMessage(), ex);
		}
	}

	@Override
	public Map<String, Map<String, String>> readAll() {
		Map<byte[], byte[]> fields;
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long count = connection.hashCommands().hLen(this.key);
			if (count != null && count > MAX_FIELDS) {
				throw new IllegalStateException("'" + new String(this.key, StandardCharsets.UTF_8) + "' holds " + count
						+ " fields, more than the " + MAX_FIELDS + " read");
			}
			fields = connection.hashCommands().hGetAll(this.key);
		}
		catch (RuntimeException ex) {
			throw new RateLimitStoreException("Could not read the rate limit policies' changes from Redis: "
					+ ex.getMessage(), ex);
		}
		Map<String, Map<String, String>> changes = new LinkedHashMap<>();
		if (fields != null) {
			fields.forEach((field, value) -> changes.put(new String(field, StandardCharsets.UTF_8),
					SharedChanges.decode(new String(value, StandardCharsets.UTF_8))));
		}
		return changes;
	}

}
