// Package kubeconfig finds the cluster to talk to the way kubectl does, so
// that a program built on this library connects wherever kubectl would.
//
// It sits before the whole flow: it turns flags and files into the
// *rest.Config that reflector.NewTypedListerWatcher and every client need.
//
// # Loading rules
//
// In order, the first that applies wins:
//
//  1. --kubeconfig: that one file.
//  2. $KUBECONFIG: a list of files (":"-separated on Linux), merged; the
//     first file to set a value wins.
//  3. ~/.kube/config.
//  4. In a Pod with no kubeconfig: the Pod's service account
//     (KUBERNETES_SERVICE_HOST and the mounted token).
//
// --context picks a context of the loaded kubeconfig other than its
// current-context.
//
// # Usage
//
//	var conn kubeconfig.Flags
//	conn.Register(flag.CommandLine)
//	flag.Parse()
//	cfg, err := conn.Load()
//
// These are client-go's clientcmd rules (NewDefaultClientConfigLoadingRules
// and a deferred, non-interactive client config); this package only names
// them, registers the flags, and says what to do when nothing is found.
package kubeconfig
