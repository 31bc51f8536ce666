package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs scripts asynchronously on the application's Lettuce connection (standalone, Sentinel or Cluster, whatever
 * {@code spring.data.redis.*} configured), so that a caller can stop waiting after its own timeout and concurrent
 * callers share one pipelined connection. Lettuce routes each script to the Cluster node that owns its keys' slot.
 * <p>
 * The connection is obtained on a background thread, because connecting to an unreachable host can block for the
 * client's connect timeout, far longer than a rate limit decision may take.
 */
final class LettuceScriptExecutor implements ScriptExecutor {

	private final LettuceConnectionFactory connectionFactory;

	private final ExecutorService connector = Executors.newSingleThreadExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "ratelimit-redis-connect");
		thread.setDaemon(true);
		return thread;
	});

	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

	private @Nullable RedisConnection connection;

	private @Nullable CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> connecting;

	private volatile boolean closed;

	private volatile Iterable<RateLimitScript> preload = List.of();

	private final RedisVersionCheck versionCheck = new RedisVersionCheck();

	LettuceScriptExecutor(LettuceConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	@Override
	public CompletableFuture<List<Object>> execute(RateLimitScript script, byte[][] keys, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.commands;
		if (commands != null) {
			return run(commands, script, keys, args);
		}
		return connect().thenCompose((connected) -> run(connected, script, keys, args));
	}

	/**
	 * Return whether the connection is up (the first one was made and not lost since).
	 */
	boolean isConnected() {
		return this.commands != null;
	}

	@Override
	public CompletableFuture<?> delete(byte[][] keys) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.commands;
		if (commands != null) {
			return commands.del(keys).toCompletableFuture();
		}
		return connect().thenCompose((connected) -> connected.del(keys).toCompletableFuture());
	}

	@Override
	public void warmUp(Iterable<RateLimitScript> scripts) {
		this.preload = scripts;
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.commands;
		if (commands != null) {
			load(commands, scripts);
		}
		else {
			connect();
		}
	}

	private static void load(RedisClusterAsyncCommands<byte[], byte[]> commands, Iterable<RateLimitScript> scripts) {
		for (RateLimitScript script : scripts) {
			commands.scriptLoad(script.source());
		}
	}

	private CompletableFuture<List<Object>> run(RedisClusterAsyncCommands<byte[], byte[]> commands,
			RateLimitScript script, byte[][] keys, byte[][] args) {
		CompletableFuture<List<Object>> evalsha = commands
			.<List<Object>>evalsha(script.sha1(), ScriptOutputType.MULTI, keys, args)
			.toCompletableFuture();
		return evalsha.exceptionallyCompose((failure) -> {
			if (ScriptExecutor.isNoScript(failure)) {
				return commands.<List<Object>>eval(script.source(), ScriptOutputType.MULTI, keys, args)
					.toCompletableFuture();
			}
			if (!(failure instanceof RedisCommandExecutionException)) {
				// Not an error reply from Redis: the connection may be gone for good (a reconnecting one keeps
				// buffering commands instead), so look it up again next time.
				invalidate(commands);
			}
			return CompletableFuture.failedFuture(failure);
		});
	}

	private synchronized CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> connect() {
		if (this.closed) {
			return CompletableFuture.failedFuture(new IllegalStateException("Redis rate limit store is closed"));
		}
		if (this.connecting == null || this.connecting.isCompletedExceptionally()) {
			this.connecting = CompletableFuture.supplyAsync(this::openConnection, this.connector);
		}
		return this.connecting;
	}

	private RedisClusterAsyncCommands<byte[], byte[]> openConnection() {
		RedisConnection connection = this.connectionFactory.getConnection();
		RedisClusterAsyncCommands<byte[], byte[]> commands = ((LettuceConnection) connection).getNativeConnection();
		// Queued before any decision can use the connection, so that a connection's commands reach Redis in order:
		// every EVALSHA after the loads, none of them paying for a NOSCRIPT and an EVAL. Also done after reconnects.
		load(commands, this.preload);
		if (this.versionCheck.pending()) {
			commands.info("server").thenAccept(this.versionCheck::checkInfo);
		}
		synchronized (this) {
			this.connection = connection;
			this.commands = commands;
		}
		return commands;
	}

	private synchronized void invalidate(RedisClusterAsyncCommands<byte[], byte[]> failed) {
		if (this.commands == failed && !isOpen(failed)) {
			this.commands = null;
			this.connecting = null;
			closeConnection();
		}
	}

	/** Whether the commands' connection is open (Lettuce 7 dropped {@code isOpen()} from the commands). */
	private static boolean isOpen(RedisClusterAsyncCommands<byte[], byte[]> commands) {
		if (commands instanceof RedisAsyncCommands<byte[], byte[]> standalone) {
			return standalone.getStatefulConnection().isOpen();
		}
		if (commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
			return cluster.getStatefulConnection().isOpen();
		}
		return false;
	}

	private void closeConnection() {
		RedisConnection connection = this.connection;
		this.connection = null;
		if (connection != null) {
			try {
				connection.close();
			}
			catch (RuntimeException ex) {
				// Closing a shared connection wrapper cannot fail in a way worth reporting.
			}
		}
	}

	@Override
	public synchronized void close() {
		this.closed = true;
		this.commands = null;
		closeConnection();
		this.connector.shutdownNow();
	}

}
