package io.github.ratelimit.redis;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

/**
 * Runs scripts through any {@link RedisConnectionFactory} (Jedis, for instance), on a small pool of threads so that
 * the caller can stop waiting after its own timeout even though the client blocks. The pool and its queue are
 * bounded: when Redis hangs, callers fail fast instead of piling up threads.
 */
final class ConnectionScriptExecutor implements ScriptExecutor {

	private final RedisConnectionFactory connectionFactory;

	private final ThreadPoolExecutor pool;

	private final RedisVersionCheck versionCheck = new RedisVersionCheck();

	ConnectionScriptExecutor(RedisConnectionFactory connectionFactory, int threads) {
		this.connectionFactory = connectionFactory;
		AtomicInteger count = new AtomicInteger();
		this.pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024),
				(runnable) -> {
					Thread thread = new Thread(runnable, "ratelimit-redis-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.pool.allowCoreThreadTimeOut(true);
	}

	@Override
	public CompletableFuture<List<Object>> execute(RateLimitScript script, byte[][] keys, byte[][] args) {
		try {
			return CompletableFuture.supplyAsync(() -> run(script, keys, args), this.pool);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public CompletableFuture<?> delete(byte[][] keys) {
		try {
			return CompletableFuture.runAsync(() -> {
				try (RedisConnection connection = this.connectionFactory.getConnection()) {
					connection.keyCommands().del(keys);
				}
			}, this.pool);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private List<Object> run(RateLimitScript script, byte[][] keys, byte[][] args) {
		byte[][] keysAndArgs = new byte[keys.length + args.length][];
		System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
		System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			try {
				return connection.scriptingCommands().evalSha(script.sha1(), ReturnType.MULTI, keys.length, keysAndArgs);
			}
			catch (RuntimeException ex) {
				if (!ScriptExecutor.isNoScript(ex)) {
					throw ex;
				}
				return connection.scriptingCommands().eval(script.source(), ReturnType.MULTI, keys.length, keysAndArgs);
			}
		}
	}

	/**
	 * Check the server's version in the background, off the decisions' path. A Redis down at start-up goes
	 * unchecked: the fixed window's script then names the version it needs in its own error.
	 */
	@Override
	public void warmUp(Iterable<RateLimitScript> scripts) {
		try {
			this.pool.execute(this::checkVersion);
		}
		catch (RejectedExecutionException ex) {
			// A full queue at start-up: the check is a courtesy, not worth waiting for.
		}
	}

	private void checkVersion() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Properties info = connection.serverCommands().info("server");
			// A Cluster connection's reply names each node's properties apart: no single version, no check.
			this.versionCheck.check((info != null) ? info.getProperty("redis_version") : null);
		}
		catch (RuntimeException ex) {
			// Redis unreachable: see above.
		}
	}

	@Override
	public void close() {
		this.pool.shutdownNow();
	}

}
