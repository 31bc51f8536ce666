package io.github.ratelimit.test;

import java.io.File;

/**
 * Finds the programs the test support runs ({@code redis-server}, {@code node}, ...).
 */
final class Executables {

	private Executables() {
	}

	/**
	 * Return the absolute path of an executable on the PATH (or in the usual system directories), or {@code null}.
	 */
	static String find(String name) {
		for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
			File candidate = new File(dir, name);
			if (candidate.canExecute()) {
				return candidate.getAbsolutePath();
			}
		}
		for (String dir : new String[] { "/usr/bin", "/usr/local/bin", "/usr/sbin" }) {
			File candidate = new File(dir, name);
			if (candidate.canExecute()) {
				return candidate.getAbsolutePath();
			}
		}
		return null;
	}

}
