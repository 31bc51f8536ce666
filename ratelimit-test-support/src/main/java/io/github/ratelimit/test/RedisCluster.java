package io.github.ratelimit.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real Redis Cluster of spawned {@code redis-server} processes on free ports of 127.0.0.1, created with
 * {@code redis-cli --cluster create}, with or without replicas, and torn down on {@link #close()}.
 */
public final class RedisCluster implements AutoCloseable {

	private final List<RedisServer> nodes;

	private RedisCluster(List<RedisServer> nodes) {
		this.nodes = nodes;
	}

	/**
	 * Start a cluster of the given number of masters (at least 3), without replicas.
	 */
	public static RedisCluster start(int masters) {
		return start(masters, 0, Duration.ofSeconds(5));
	}

	/**
	 * Start a cluster of the given number of masters (at least 3), each with {@code replicasPerMaster} replicas, whose
	 * nodes consider a node failed after {@code nodeTimeout} (a replica then takes over its master's slots).
	 */
	public static RedisCluster start(int masters, int replicasPerMaster, Duration nodeTimeout) {
		List<RedisServer> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
				nodes.add(RedisServer.spawn("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
						"--cluster-node-timeout", String.valueOf(nodeTimeout.toMillis())));
			}
			List<String> command = new ArrayList<>(List.of(RedisServer.executable("redis-cli"), "--cluster", "create"));
			nodes.forEach((node) -> command.add(node.host() + ":" + node.port()));
			command.addAll(List.of("--cluster-replicas", String.valueOf(replicasPerMaster), "--cluster-yes"));
			Process create = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(create.getInputStream().readAllBytes());
			if (!create.waitFor(60, TimeUnit.SECONDS) || create.exitValue() != 0) {
				throw new IllegalStateException("redis-cli --cluster create failed:\n" + output);
			}
			RedisCluster cluster = new RedisCluster(nodes);
			RedisServer.awaitUntil(Duration.ofSeconds(30), cluster::isHealthy,
					() -> "Redis Cluster did not reach cluster_state:ok");
			RedisServer.awaitUntil(Duration.ofSeconds(30), () -> cluster.replicasInSync(replicasPerMaster),
					() -> "the replicas of the Redis Cluster did not finish their first sync");
			return cluster;
		}
		catch (Exception ex) {
			nodes.forEach(RedisServer::close);
			throw (ex instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex);
		}
	}

	private boolean replicasInSync(int replicasPerMaster) {
		if (replicasPerMaster == 0) {
			return true;
		}
		int synced = 0;
		for (RedisServer node : this.nodes) {
			String replication = String.valueOf(node.call("INFO", "replication"));
			if (replication.contains("role:slave") && replication.contains("master_link_status:up")) {
				synced++;
			}
		}
		return synced == this.nodes.size() / (1 + replicasPerMaster) * replicasPerMaster;
	}

	/**
	 * Return the node that is now the master of the slot of the given key.
	 */
	public RedisServer masterOf(String key) {
		long slot = (Long) this.nodes.get(0).call("CLUSTER", "KEYSLOT", key);
		for (RedisServer node : this.nodes) {
			if (node.isRunning() && String.valueOf(node.call("INFO", "replication")).contains("role:master")) {
				for (Object range : (List<?>) node.call("CLUSTER", "SLOTS")) {
					List<?> slots = (List<?>) range;
					List<?> master = (List<?>) slots.get(2);
					if ((Long) slots.get(0) <= slot && slot <= (Long) slots.get(1)
							&& ((Long) master.get(1)).intValue() == node.port()) {
						return node;
					}
				}
			}
		}
		throw new IllegalStateException("no master serves the slot of " + key);
	}

	/**
	 * Return whether every running node reports {@code cluster_state:ok} with every slot assigned.
	 */
	public boolean isHealthy() {
		for (RedisServer node : this.nodes) {
			if (!node.isRunning()) {
				continue;
			}
			String info = String.valueOf(node.call("CLUSTER", "INFO"));
			if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_assigned:16384")) {
				return false;
			}
		}
		return true;
	}

	public List<RedisServer> nodes() {
		return this.nodes;
	}

	/**
	 * Return the nodes as {@code spring.data.redis.cluster.nodes} wants them: {@code host:port,host:port}.
	 */
	public String nodeAddresses() {
		return this.nodes.stream().map((node) -> node.host() + ":" + node.port()).collect(Collectors.joining(","));
	}

	/**
	 * Return the number of calls of a command summed over every node.
	 */
	public long commandCalls(String command) {
		return this.nodes.stream().mapToLong((node) -> node.commandCalls(command)).sum();
	}

	public void resetStats() {
		this.nodes.forEach(RedisServer::resetStats);
	}

	/**
	 * Return the number of keys held by each node, in node order.
	 */
	public List<Long> keysPerNode() {
		return this.nodes.stream().map((node) -> (Long) node.call("DBSIZE")).toList();
	}

	@Override
	public void close() {
		this.nodes.forEach(RedisServer::close);
	}

}
