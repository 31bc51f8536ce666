package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.store.ResetListener;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;

/**
 * Notices that Redis lost its data (a restart without persistence, a failover to an empty replica): once a second it
 * sets a key of this instance's that expires after {@value #MARKER_TTL_MILLIS} ms, reading the value it replaced; a
 * key found gone though it was set a second before means the counters went with it. Its listeners then forget what
 * they learnt from them ({@link ResetListener#onClear()}): cached denials, which would otherwise reject clients that
 * Redis now admits, and leased blocks. A Redis out of reach for longer than the key lives, or evicting it, clears
 * them too, which costs only store calls.
 */
final class StateLossWatch implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(StateLossWatch.class.getName());

	/** How often the key is set. */
	static final long INTERVAL_MILLIS = 1_000;

	/** How long the key lives unless set again. */
	static final long MARKER_TTL_MILLIS = 5_000;

	private static final byte[] VALUE = { '1' };

	private final RedisConnectionFactory connectionFactory;

	private final byte[] key;

	private final List<ResetListener> listeners = new CopyOnWriteArrayList<>();

	private @Nullable ScheduledExecutorService scheduler;

	/** Whether the key was set by the last check: only then does a missing one mean lost data. */
	private boolean set;

	private boolean closed;

	StateLossWatch(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.connectionFactory = connectionFactory;
		this.key = (keyPrefix + ":alive:" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
	}

	/** Watch, from the first listener on. */
	synchronized void addListener(ResetListener listener) {
		this.listeners.add(listener);
		if (this.scheduler == null && !this.closed) {
			ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "ratelimit-redis-state-watch");
				thread.setDaemon(true);
				return thread;
			});
			scheduler.scheduleWithFixedDelay(this::check, 0, INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
			this.scheduler = scheduler;
		}
	}

	/** Listen without the background checks: a test calls {@link #check()} itself. */
	void listenWithoutWatching(ResetListener listener) {
		this.listeners.add(listener);
	}

	/** Set the key, and tell the listeners if it was gone though set a second before. */
	void check() {
		byte[] before;
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			before = connection.stringCommands()
				.setGet(this.key, VALUE, Expiration.milliseconds(MARKER_TTL_MILLIS), SetOption.upsert());
		}
		catch (RuntimeException ex) {
			return; // out of reach: the next check that reaches it tells
		}
		boolean lost = this.set && before == null;
		this.set = true;
		if (lost) {
			logger.log(System.Logger.Level.WARNING, "Redis lost this instance's key since the last check (a restart "
					+ "without persistence, a failover, an eviction): forgetting the cached denials and leased blocks");
			this.listeners.forEach(ResetListener::onClear);
		}
	}

	@Override
	public synchronized void close() {
		this.closed = true;
		ScheduledExecutorService scheduler = this.scheduler;
		if (scheduler != null) {
			scheduler.shutdownNow();
			this.scheduler = null;
		}
	}

}
