package io.github.ratelimit.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports on the loopback interface.
 */
final class Ports {

	private Ports() {
	}

	/**
	 * Return a port that is free, and whose cluster bus port ({@code port + 10000}) is free too.
	 */
	static int freePort() {
		for (int attempt = 0; attempt < 200; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20_000, 55_000);
			if (isFree(port) && isFree(port + 10_000)) {
				return port;
			}
		}
		throw new IllegalStateException("No free port found on 127.0.0.1");
	}

	static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			socket.setReuseAddress(true);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
