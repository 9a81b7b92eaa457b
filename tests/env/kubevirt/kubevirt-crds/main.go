// kubevirt-crds prints, as one JSON array on stdout, objects KubeVirt's virt-operator makes at this
// version, from KubeVirt's own constructors:
//
//	kubevirt-crds                    the 17 CustomResourceDefinitions (install strategy + KubeVirt CRD)
//	kubevirt-crds operator-rbac NS   virt-operator's ServiceAccount, Roles, ClusterRoles and bindings
//	kubevirt-crds component-rbac NS  the RBAC virt-operator creates for virt-api, virt-controller,
//	                                 virt-handler, export proxy and synchronization controller
//
// tests/env/build-kubevirt.sh compiles it into the KubeVirt cache; tests/env/kubevirt/generate-crds.ts
// renames its output with the api-rewriter's rules into knative/kubevirt/crds/.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/rbac"
)

func crds() ([]interface{}, error) {
	makers := []func() (*extv1.CustomResourceDefinition, error){
		components.NewKubeVirtCrd,
		components.NewVirtualMachineInstanceCrd, components.NewPresetCrd, components.NewReplicaSetCrd,
		components.NewVirtualMachineCrd, components.NewVirtualMachineInstanceMigrationCrd,
		components.NewVirtualMachineSnapshotCrd, components.NewVirtualMachineSnapshotContentCrd,
		components.NewVirtualMachineRestoreCrd, components.NewVirtualMachineInstancetypeCrd,
		components.NewVirtualMachineClusterInstancetypeCrd, components.NewVirtualMachinePoolCrd,
		components.NewMigrationPolicyCrd, components.NewVirtualMachinePreferenceCrd,
		components.NewVirtualMachineClusterPreferenceCrd, components.NewVirtualMachineExportCrd,
		components.NewVirtualMachineCloneCrd,
	}
	out := make([]interface{}, 0, len(makers))
	for _, make := range makers {
		crd, err := make()
		if err != nil {
			return nil, err
		}
		crd.APIVersion = "apiextensions.k8s.io/v1"
		crd.Kind = "CustomResourceDefinition"
		out = append(out, crd)
	}
	return out, nil
}

func componentRbac(ns string) []interface{} {
	var all []runtime.Object
	all = append(all, rbac.GetAllCluster()...)
	all = append(all, rbac.GetAllApiServer(ns)...)
	all = append(all, rbac.GetAllController(ns)...)
	all = append(all, rbac.GetAllHandler(ns)...)
	all = append(all, rbac.GetAllExportProxy(ns)...)
	all = append(all, rbac.GetAllSynchronizationController(ns)...)
	out := make([]interface{}, 0, len(all))
	for _, o := range all {
		out = append(out, o)
	}
	return out
}

func main() {
	var objects []interface{}
	var err error
	args := os.Args[1:]
	switch {
	case len(args) == 0:
		objects, err = crds()
	case len(args) == 2 && args[0] == "operator-rbac":
		objects = rbac.GetAllOperator(args[1])
	case len(args) == 2 && args[0] == "component-rbac":
		objects = componentRbac(args[1])
	default:
		err = fmt.Errorf("usage: kubevirt-crds [operator-rbac NAMESPACE | component-rbac NAMESPACE]")
	}
	if err == nil {
		var out []byte
		if out, err = json.Marshal(objects); err == nil {
			_, err = os.Stdout.Write(append(out, '\n'))
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubevirt-crds: %v\n", err)
		os.Exit(1)
	}
}
