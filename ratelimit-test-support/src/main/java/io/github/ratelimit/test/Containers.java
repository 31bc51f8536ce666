package io.github.ratelimit.test;

import java.nio.file.Files;
import java.nio.file.Path;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Redis in a container, where a Docker engine runs.
 */
final class Containers {

	private Containers() {
	}

	static boolean dockerAvailable() {
		// Probing Docker when there is no sign of it costs seconds and pages of logs; look for a sign first.
		boolean sign = System.getenv("DOCKER_HOST") != null || Files.exists(Path.of("/var/run/docker.sock"))
				|| Files.exists(Path.of(System.getProperty("user.home"), ".testcontainers.properties"));
		if (!sign) {
			return false;
		}
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	@SuppressWarnings("resource")
	static RedisServer start() {
		GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse("redis:7-alpine"))
			.withExposedPorts(6379)
			.withCommand("redis-server", "--save", "", "--appendonly", "no");
		container.start();
		return RedisServer.container(container.getHost(), container.getMappedPort(6379), container::stop);
	}

}
