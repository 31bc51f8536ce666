package io.github.ratelimit.redis;

import java.util.function.BooleanSupplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Which Redis Cluster master holds a hash slot, from the topology Lettuce keeps (and refreshes on failover), so that
 * the limiter can keep a circuit breaker per master. No call goes out: until the client has a topology, every slot
 * is in the unnamed part.
 */
final class ClusterNodes {

	private final LettuceConnectionFactory connectionFactory;

	/** Whether the store's connection is up, and with it the client's first topology. */
	private final BooleanSupplier connected;

	ClusterNodes(LettuceConnectionFactory connectionFactory, BooleanSupplier connected) {
		this.connectionFactory = connectionFactory;
		this.connected = connected;
	}

	/**
	 * Return the id of the master that holds the slot, or {@code ""} while that is not known.
	 */
	String nodeOf(int slot) {
		if (!this.connected.getAsBoolean()) {
			return ""; // asking for partitions before the first connection would load them on this thread
		}
		AbstractRedisClient client = this.connectionFactory.getNativeClient();
		if (!(client instanceof RedisClusterClient cluster)) {
			return "";
		}
		try {
			Partitions partitions = cluster.getPartitions();
			RedisClusterNode node = partitions.getPartitionBySlot(slot);
			return (node != null && node.getNodeId() != null) ? node.getNodeId() : "";
		}
		catch (RuntimeException ex) {
			return "";
		}
	}

}
