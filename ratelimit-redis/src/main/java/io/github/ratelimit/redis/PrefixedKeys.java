package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.store.RateLimitStoreException;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * Deletes every key of the store, and nothing else: {@code SCAN MATCH <prefix>:\{*} (every key of the store starts
 * so, and no key of a store whose prefix merely starts with this one does) and {@code UNLINK} on
 * a standalone Redis, on each master of a Cluster. Never {@code KEYS} or {@code FLUSHDB}: the database may hold the
 * application's own data, and the scan does not block Redis.
 */
final class PrefixedKeys {

	private static final int BATCH = 500;

	private final RedisConnectionFactory connectionFactory;

	private final String prefix;

	PrefixedKeys(RedisConnectionFactory connectionFactory, String prefix) {
		this.connectionFactory = connectionFactory;
		this.prefix = prefix;
	}

	/** Delete them; return how many there were. */
	long deleteAll() {
		ScanOptions options = ScanOptions.scanOptions().match(globEscaped(this.prefix) + ":\\{*").count(1_000).build();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return (connection instanceof RedisClusterConnection cluster) ? deleteOnEachMaster(cluster, options)
					: delete(connection, options);
		}
		catch (RuntimeException ex) {
			throw new RateLimitStoreException("Cannot delete the rate limit keys under '" + this.prefix + ":'", ex);
		}
	}

	private static long deleteOnEachMaster(RedisClusterConnection connection, ScanOptions options) {
		long deleted = 0;
		for (RedisClusterNode node : connection.clusterGetNodes()) {
			if (node.isMaster()) {
				try (Cursor<byte[]> keys = connection.scan(node, options)) {
					// One key a call: the keys of a batch would span slots.
					while (keys.hasNext()) {
						Long removed = connection.keyCommands().unlink(keys.next());
						deleted += (removed != null) ? removed : 0;
					}
				}
			}
		}
		return deleted;
	}

	private static long delete(RedisConnection connection, ScanOptions options) {
		long deleted = 0;
		try (Cursor<byte[]> keys = connection.keyCommands().scan(options)) {
			List<byte[]> batch = new ArrayList<>(BATCH);
			while (keys.hasNext()) {
				batch.add(keys.next());
				if (batch.size() == BATCH || !keys.hasNext()) {
					Long removed = connection.keyCommands().unlink(batch.toArray(new byte[0][]));
					deleted += (removed != null) ? removed : 0;
					batch.clear();
				}
			}
		}
		return deleted;
	}

	/** Escape the characters {@code SCAN MATCH} gives a meaning: a prefix is matched literally. */
	static String globEscaped(String prefix) {
		StringBuilder escaped = new StringBuilder(prefix.length() + 4);
		for (int i = 0; i < prefix.length(); i++) {
			char c = prefix.charAt(i);
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '^' || c == '-' || c == '{') {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

}
